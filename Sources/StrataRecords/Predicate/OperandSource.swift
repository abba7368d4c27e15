import StrataStorage

/// Where one side of a compiled comparison gets its values for a row.
indirect enum OperandSource: Sendable {
    case constant(StoredValue)
    case keyPath([String])
    case aggregate(AggregateFunction, [String])
    case list([OperandSource])

    /// Throws `invalidFetch` for a variable: values are given to a prepared fetch, which
    /// substitutes them before it compiles.
    init(_ expression: FetchExpression) throws {
        switch expression {
        case .constant(let value): self = .constant(value)
        case .keyPath(let path): self = .keyPath(path)
        case .aggregate(let function, let path): self = .aggregate(function, path)
        case .list(let elements): self = .list(try elements.map(OperandSource.init))
        case .variable(let name): throw StrataError.invalidFetch(PreparedFetch.unboundMessage(name))
        }
    }

    /// The values when they do not depend on the row (constants and lists of them), else nil.
    var constantValues: KeyPathValues? {
        switch self {
        case .constant(let value): return .one(value)
        case .keyPath, .aggregate: return nil
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
}

/// What a key path yields for one object: one value, or a collection through a to-many
/// relationship (which a comparison without a quantifier tests with ANY, as Core Data does).
enum KeyPathValues: Hashable, Sendable {
    /// The value through attributes and to-one relationships (`.null` when absent).
    case one(StoredValue)
    /// The values through a to-many relationship, one per object reached (none for none).
    case many([StoredValue])
}
