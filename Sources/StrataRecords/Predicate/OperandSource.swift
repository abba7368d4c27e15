import StrataStorage

/// Where one side of a compiled comparison gets its values for a row.
indirect enum OperandSource: Sendable {
    case constant(StoredValue)
    case keyPath([String])
    /// A key path of one component naming a stored field of the entity the predicate was
    /// compiled for: the row's value at that index, with no name looked up per row.
    case field(Int)
    case aggregate(AggregateFunction, [String])
    case list([OperandSource])

    /// Throws `invalidFetch` for a variable: values are given to a prepared fetch, which
    /// substitutes them before it compiles. With `entity`, a key path naming one of its stored
    /// fields is bound to the field's index (the subjects are then rows of that entity).
    init(_ expression: FetchExpression, in entity: EntityDescription? = nil) throws {
        switch expression {
        case .constant(let value): self = .constant(value)
        case .keyPath(let path):
            if path.count == 1, let entity, let field = entity.fieldIndex[path[0]], entity.fields[field].kind != .auxiliary {
                self = .field(field)
            } else {
                self = .keyPath(path)
            }
        case .aggregate(let function, let path): self = .aggregate(function, path)
        case .list(let elements): self = .list(try elements.map { try OperandSource($0, in: entity) })
        case .variable(let name): throw StrataError.invalidFetch(PreparedFetch.unboundMessage(name))
        }
    }

    /// Whether the values come from constants and the subject's own fields alone (no key path
    /// to walk, no aggregate): a subject that reads single fields from stored bytes serves it.
    var readsOnlyFields: Bool {
        switch self {
        case .constant, .field: return true
        case .keyPath, .aggregate: return false
        case .list(let elements): return elements.allSatisfy(\.readsOnlyFields)
        }
    }

    /// The values when they do not depend on the row (constants and lists of them), else nil.
    var constantValues: KeyPathValues? {
        switch self {
        case .constant(let value): return .one(value)
        case .keyPath, .field, .aggregate: return nil
        case .list(let elements):
            var values: [StoredValue] = []
            for element in elements {
                switch element.constantValues {
                case .one(let value)?: values.append(value)
                case .many(let elementValues)?: values += elementValues
                case nil: return nil
                }
            }
            return .many(values)
        }
    }

    func resolve<Subject: PredicateSubject>(_ subject: Subject) throws -> KeyPathValues {
        switch self {
        case .constant(let value):
            return .one(value)
        case .keyPath(let path):
            return try subject.values(at: path)
        case .field(let field):
            return .one(try subject.value(atField: field))
        case .aggregate(let function, let path):
            return .one(try Aggregation.apply(function, to: try subject.values(at: path)))
        case .list(let elements):
            // A list holds values, not collections: a to-many element contributes each of its own.
            var values: [StoredValue] = []
            for element in elements {
                switch try element.resolve(subject) {
                case .one(let value): values.append(value)
                case .many(let elementValues): values += elementValues
                }
            }
            return .many(values)
        }
    }
}

/// One object a predicate is evaluated against; the record layer implements it over a row.
protocol PredicateSubject {
    /// The value at `keyPath`: `.one` through attributes and to-one relationships (nil
    /// when a to-one on the way is nil), `.many` when the path crosses a to-many
    /// relationship (a to-many relationship itself yields its objects' primary keys as `.int`).
    ///
    /// The empty key path (`SELF` in a format string) is the object itself, as the
    /// implementation chooses to represent it (its primary key, typically).
    func values(at keyPath: [String]) throws -> KeyPathValues

    /// The value of stored field `field` of the subject's own entity (a key path bound when the
    /// predicate was compiled for that entity): what `values(at: [its name])` gives.
    func value(atField field: Int) throws -> StoredValue

    /// Whether the subject holds its row as stored, so ``storedValue(atField:)`` answers: a
    /// comparison of a field with a constant is then decided on the field's bytes.
    static var holdsStoredRow: Bool { get }

    /// The stored bytes of field `field` (one value as the row holds it), nil when the row holds
    /// none. Asked only when ``holdsStoredRow``.
    func storedValue(atField field: Int) throws -> UnsafeRawBufferPointer?
}

extension PredicateSubject {
    static var holdsStoredRow: Bool { false }

    func storedValue(atField field: Int) throws -> UnsafeRawBufferPointer? { nil }
}

/// What a key path yields for one object: one value, or a collection through a to-many
/// relationship (which a comparison without a quantifier tests with ANY, as Core Data does).
enum KeyPathValues: Hashable, Sendable {
    /// The value through attributes and to-one relationships (`.null` when absent).
    case one(StoredValue)
    /// The values through a to-many relationship, one per object reached (none for none).
    case many([StoredValue])
}
