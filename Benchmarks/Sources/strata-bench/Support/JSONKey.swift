/// A JSON object's key by name, for objects whose keys are data rather than a type's
/// properties (a report's parameters and figures, the fields of a run's core).
struct JSONKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { nil }
}
