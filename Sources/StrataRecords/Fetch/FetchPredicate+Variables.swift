import StrataStorage

extension FetchPredicate {
    /// Whether a `$name` variable appears.
    public var hasVariables: Bool {
        var found = false
        forEachVariable { _ in found = true }
        return found
    }

    /// The predicate with `values` for its variables (`NSPredicate`'s
    /// `withSubstitutionVariables`).
    ///
    /// - Throws: `StrataError.invalidFetch` naming a variable `values` has no value for.
    public func substituting(_ values: [String: StoredValue]) throws -> FetchPredicate {
        try substituting(FetchBindings(names: Array(values.keys), values: Array(values.values)))
    }

    func substituting(_ values: FetchBindings) throws -> FetchPredicate {
        switch self {
        case .constant: return self
        case .comparison(var comparison):
            comparison.lhs = try comparison.lhs.substituting(values)
            comparison.rhs = try comparison.rhs.substituting(values)
            return .comparison(comparison)
        case .and(let terms): return .and(try terms.map { try $0.substituting(values) })
        case .or(let terms): return .or(try terms.map { try $0.substituting(values) })
        case .not(let operand): return .not(try operand.substituting(values))
        }
    }

    func forEachVariable(_ body: (String) -> Void) {
        switch self {
        case .constant: break
        case .comparison(let comparison): comparison.lhs.forEachVariable(body); comparison.rhs.forEachVariable(body)
        case .and(let terms), .or(let terms): for term in terms { term.forEachVariable(body) }
        case .not(let operand): operand.forEachVariable(body)
        }
    }
}

extension FetchExpression {
    func substituting(_ values: FetchBindings) throws -> FetchExpression {
        switch self {
        case .constant, .keyPath, .aggregate: return self
        case .list(let items): return .list(try items.map { try $0.substituting(values) })
        case .variable(let name):
            guard let value = values[name] else { throw StrataError.invalidFetch("no value for $\(name)") }
            return .constant(value)
        }
    }

    func forEachVariable(_ body: (String) -> Void) {
        switch self {
        case .constant, .keyPath, .aggregate: break
        case .list(let items): for item in items { item.forEachVariable(body) }
        case .variable(let name): body(name)
        }
    }
}

/// The values of a prepared fetch's variables, in the order of its names (a few: looked up
/// by a linear search, cheaper than hashing).
struct FetchBindings {
    let names: [String]
    let values: [StoredValue]

    subscript(name: String) -> StoredValue? {
        for i in names.indices where names[i] == name { return values[i] }
        return nil
    }

    /// The kinds of the values, 4 bits each (kind + 1); 0 when there are none or more than 16.
    var packedKinds: UInt64 {
        guard values.count <= 16 else { return 0 }
        var packed: UInt64 = 0
        for value in values { packed = packed << 4 | UInt64(value.kindTag + 1) }
        return packed
    }
}
