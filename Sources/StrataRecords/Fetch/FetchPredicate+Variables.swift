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
        case .comparison(var c):
            c.lhs = try c.lhs.substituting(values)
            c.rhs = try c.rhs.substituting(values)
            return .comparison(c)
        case .and(let ps): return .and(try ps.map { try $0.substituting(values) })
        case .or(let ps): return .or(try ps.map { try $0.substituting(values) })
        case .not(let p): return .not(try p.substituting(values))
        }
    }

    func forEachVariable(_ body: (String) -> Void) {
        switch self {
        case .constant: break
        case .comparison(let c): c.lhs.forEachVariable(body); c.rhs.forEachVariable(body)
        case .and(let ps), .or(let ps): for p in ps { p.forEachVariable(body) }
        case .not(let p): p.forEachVariable(body)
        }
    }
}

extension FetchExpression {
    func substituting(_ values: FetchBindings) throws -> FetchExpression {
        switch self {
        case .constant, .keyPath, .aggregate: return self
        case .list(let items): return .list(try items.map { try $0.substituting(values) })
        case .variable(let name):
            guard let v = values[name] else { throw StrataError.invalidFetch("no value for $\(name)") }
            return .constant(v)
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
