/// An entity of a model, resolved: its properties, its row layout, its relationships.
public final class EntityDescription: Sendable {
    /// The entity's name, unique in the model.
    public let name: String
    /// Position in the model; also the entity's number in tree names and object identifiers.
    public let index: Int
    /// The entity's name in the previous model version (lightweight migration).
    public let renamingIdentifier: String?
    /// Declared attributes, transient ones included.
    public let attributes: [AttributeDescription]
    /// The entity's relationships, in declaration order.
    public let relationships: [ResolvedRelationship]
    /// The entity's derived attributes, in declaration order.
    public let derivedAttributes: [ResolvedDerivedAttribute]
    /// Each constraint's property names.
    public let uniquenessConstraints: [[String]]
    /// Each index's property names.
    public let indexes: [[String]]
    /// Each word index's property names (``FullTextIndex``).
    public let fullTextIndexes: [[String]]
    let fields: [Field]
    let fieldIndex: [String: Int]
    let relationshipIndex: [String: Int]
    /// Per uniqueness constraint and per index: the fields, in order.
    let uniqueFields: [[Int]]
    let indexFields: [[Int]]
    /// Per word index: the fields, in order.
    let fullTextFields: [[Int]]
    let treeNames: EntityTreeNames
    /// Per index, what the fetch planner needs to know of its first attribute.
    let indexLeads: [IndexLead]
    /// The to-one relationships' fields, and the entities they reach.
    let toOneFields: [(field: Int, target: Int)]
    /// By field: whether a change to it moves a fetch-index or inverse entry.
    let fieldHasEntries: [Bool]
    /// What a commit checks, for the fields with a check to make (a required value, an
    /// integer range, validation rules); the rest accept any value their type holds. Plain
    /// values: reading each field's declaration per written row retained and released its
    /// parts (decision 50).
    let fieldChecks: [FieldCheck]
    /// By field: its value type, for walks of a stored row that read nothing else of a field
    /// (``StoredRowFilter``).
    let fieldTypes: [AttributeType]

    /// What a commit checks of one field's values.
    struct FieldCheck: Sendable {
        let field: Int
        let isOptional: Bool
        let integerRange: ClosedRange<Int64>?
        let hasRules: Bool
    }

    init(name: String, index: Int, renamingIdentifier: String?, attributes: [AttributeDescription],
         relationships: [ResolvedRelationship], derived: [ResolvedDerivedAttribute], unique: [[String]],
         indexes: [[String]], fullText: [[String]] = [], fields: [Field]) {
        self.name = name
        self.renamingIdentifier = renamingIdentifier
        self.index = index
        self.attributes = attributes
        self.relationships = relationships
        self.derivedAttributes = derived
        self.uniquenessConstraints = unique
        self.indexes = indexes
        self.fullTextIndexes = fullText
        self.fields = fields
        fieldTypes = fields.map(\.type)
        var fieldsByName: [String: Int] = [:]
        for (i, field) in fields.enumerated() { fieldsByName[field.name] = i }
        self.fieldIndex = fieldsByName
        var relationshipsByName: [String: Int] = [:]
        for (i, relationship) in relationships.enumerated() { relationshipsByName[relationship.name] = i }
        self.relationshipIndex = relationshipsByName
        self.uniqueFields = unique.map { $0.map { fieldsByName[$0]! } }
        self.indexFields = indexes.map { $0.map { fieldsByName[$0]! } }
        self.fullTextFields = fullText.map { $0.map { fieldsByName[$0]! } }
        self.treeNames = EntityTreeNames(name: name, indexes: indexes, unique: unique, fullText: fullText, fields: fields)
        self.toOneFields = fields.indices.compactMap { i in
            if case .toOne(let target) = fields[i].kind { return (i, target) }
            return nil
        }
        var hasEntries = fields.map { field -> Bool in if case .toOne = field.kind { return true }; return false }
        for columns in indexFields + fullTextFields { for field in columns { hasEntries[field] = true } }
        self.fieldHasEntries = hasEntries
        self.fieldChecks = fields.indices.compactMap { i in
            let field = fields[i]
            guard field.kind != .auxiliary,
                  !field.isOptional || field.type.integerRange != nil || !field.validation.isEmpty else { return nil }
            return FieldCheck(field: i, isOptional: field.isOptional, integerRange: field.type.integerRange,
                              hasRules: !field.validation.isEmpty)
        }
        self.indexLeads = indexFields.map { columns in
            let lead = columns[0]
            var canonicalOf: String?
            if let derivedLead = derived.first(where: { $0.field == lead }),
               case .canonical(.path(let path)) = derivedLead.parsed, path.count == 1 {
                canonicalOf = path[0]
            }
            return IndexLead(field: lead, name: fields[lead].name, type: fields[lead].type, canonicalOf: canonicalOf,
                             isSingleAttribute: columns.count == 1)
        }
    }

    /// How many slots a stored row has (``RecordReader/storedRow(of:)``).
    public var rowFieldCount: Int { fields.count }

    /// Decodes a stored row of the entity from its bytes (as a fetch kept them:
    /// ``RecordReader/fetchPrimaryKeysAndRowBytes(_:keepingAtMost:)``).
    ///
    /// - Throws: `StrataError.corrupt` for bytes that are not a row of this entity's layout.
    package func decodeRow(_ bytes: UnsafeRawBufferPointer) throws -> [StoredValue] {
        try RowCodec.decode(bytes, fields: fields)
    }

    /// The slot of the stored row holding the attribute, derived attribute or to-one
    /// relationship named `name` (to-ones hold the target's primary key), or `nil`.
    public func rowFieldIndex(of name: String) -> Int? {
        guard let i = fieldIndex[name], fields[i].kind != .auxiliary else { return nil }
        return i
    }

    /// Whether the row slot `index` holds a derived value (computed by the store, never set).
    public func rowFieldIsDerived(_ index: Int) -> Bool { fields[index].kind == .derived }

    /// The name of the row slot `index`.
    public func rowFieldName(_ index: Int) -> String { fields[index].name }

    /// The relationship named `name`.
    public func relationship(_ name: String) -> ResolvedRelationship? {
        relationshipIndex[name].map { relationships[$0] }
    }

    /// The declared attribute named `name` (stored or transient).
    public func attribute(_ name: String) -> AttributeDescription? { attributes.first { $0.name == name } }

    /// Whether `name` is a transient attribute (modelled, never stored).
    public func isTransient(_ name: String) -> Bool { attribute(name)?.isTransient ?? false }
}

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
