/// An entity's tree names, built once (a record operation names several trees).
struct EntityTreeNames: Sendable {
    let rows: String
    let indexes: [String]
    let unique: [String]
    let words: [String]
    /// By field; empty strings for fields that are not to-one relationships.
    let inverses: [String]

    init(name: String, indexes: [[String]], unique: [[String]], fullText: [[String]], fields: [Field]) {
        rows = "rows:\(name)"
        self.indexes = indexes.map { "index:\(name):\($0.joined(separator: ","))" }
        self.unique = unique.map { "unique:\(name):\($0.joined(separator: ","))" }
        self.words = fullText.map { "words:\(name):\($0.joined(separator: ","))" }
        inverses = fields.map { field in
            if case .toOne = field.kind { return "inverse:\(name):\(field.name)" }
            return ""
        }
    }
}
