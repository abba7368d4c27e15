extension FetchRequest {
    /// The request with every constant made a variable (`$0`, `$1`, … in the order a prepared
    /// fetch lists its variables, which is the order `hashShape` collects the constants); nil
    /// when it has variables of its own or turns indexes off.
    func shape() -> FetchRequest? {
        guard usesIndexes, let predicate else { return nil }
        var variables = 0
        guard let abstracted = predicate.abstracted(&variables) else { return nil }
        var shape = self
        shape.predicate = abstracted
        return shape
    }
}

extension FetchPredicate {
    /// Nil when a variable already appears; `variables` counts the ones made so far.
    fileprivate func abstracted(_ variables: inout Int) -> FetchPredicate? {
        switch self {
        case .constant: return self
        case .comparison(var c):
            guard let lhs = c.lhs.abstracted(&variables), let rhs = c.rhs.abstracted(&variables) else { return nil }
            c.lhs = lhs
            c.rhs = rhs
            return .comparison(c)
        case .and(let ps), .or(let ps):
            var out: [FetchPredicate] = []
            out.reserveCapacity(ps.count)
            for p in ps {
                guard let a = p.abstracted(&variables) else { return nil }
                out.append(a)
            }
            if case .and = self { return .and(out) }
            return .or(out)
        case .not(let p): return p.abstracted(&variables).map { .not($0) }
        }
    }
}

extension FetchExpression {
    fileprivate func abstracted(_ variables: inout Int) -> FetchExpression? {
        switch self {
        case .constant:
            variables += 1
            return .variable(String(variables - 1))
        case .keyPath, .aggregate: return self
        case .list(let items):
            var out: [FetchExpression] = []
            out.reserveCapacity(items.count)
            for item in items {
                guard let a = item.abstracted(&variables) else { return nil }
                out.append(a)
            }
            return .list(out)
        case .variable: return nil
        }
    }
}

extension FetchRequest {
    /// Whether `request` is this shape with constants where it has variables (everything
    /// else equal).
    func hasShape(of request: FetchRequest) -> Bool {
        guard entity == request.entity, limit == request.limit, offset == request.offset,
              sortDescriptors == request.sortDescriptors, let shape = predicate, let other = request.predicate else { return false }
        return shape.hasShape(of: other)
    }
}

extension FetchPredicate {
    /// Hashes the structure (not the constants, which are appended to `constants` in the
    /// order ``FetchRequest/shape()`` makes them variables); false when a variable appears.
    func hashShape(into hasher: inout ShapeHasher, constants: inout [StoredValue]) -> Bool {
        switch self {
        case .constant(let b):
            hasher.combine(b ? 1 : 2)
            return true
        case .comparison(let c):
            hasher.combine(3)
            hasher.combine(c.op.rawValue)
            hasher.combine(c.quantifier.rawValue)
            hasher.combine(UInt64(c.options.rawValue))
            return c.lhs.hashShape(into: &hasher, constants: &constants) && c.rhs.hashShape(into: &hasher, constants: &constants)
        case .and(let ps), .or(let ps):
            if case .and = self { hasher.combine(4) } else { hasher.combine(5) }
            hasher.combine(UInt64(ps.count))
            for p in ps where !p.hashShape(into: &hasher, constants: &constants) { return false }
            return true
        case .not(let p):
            hasher.combine(6)
            return p.hashShape(into: &hasher, constants: &constants)
        }
    }

    /// Whether `other` is this predicate with constants for its variables.
    func hasShape(of other: FetchPredicate) -> Bool {
        switch (self, other) {
        case (.constant(let a), .constant(let b)): return a == b
        case (.comparison(let a), .comparison(let b)):
            return a.op == b.op && a.quantifier == b.quantifier && a.options == b.options
                && a.lhs.hasShape(of: b.lhs) && a.rhs.hasShape(of: b.rhs)
        case (.and(let a), .and(let b)), (.or(let a), .or(let b)):
            guard a.count == b.count else { return false }
            for i in a.indices where !a[i].hasShape(of: b[i]) { return false }
            return true
        case (.not(let a), .not(let b)): return a.hasShape(of: b)
        default: return false
        }
    }
}

extension FetchExpression {
    fileprivate func hashShape(into hasher: inout ShapeHasher, constants: inout [StoredValue]) -> Bool {
        switch self {
        case .constant(let v):
            hasher.combine(7)
            constants.append(v)
        case .keyPath(let path):
            hasher.combine(8)
            for component in path { hasher.combine(component) }
        case .aggregate(let f, let path):
            hasher.combine(9)
            hasher.combine(f.rawValue)
            for component in path { hasher.combine(component) }
        case .list(let items):
            hasher.combine(10)
            hasher.combine(UInt64(items.count))
            for item in items where !item.hashShape(into: &hasher, constants: &constants) { return false }
        case .variable:
            return false
        }
        return true
    }

    /// A variable of the shape matches a constant of `other`; the rest must be equal.
    fileprivate func hasShape(of other: FetchExpression) -> Bool {
        switch (self, other) {
        case (.variable, .constant): return true
        case (.keyPath(let a), .keyPath(let b)): return a == b
        case (.aggregate(let f, let a), .aggregate(let g, let b)): return f == g && a == b
        case (.list(let a), .list(let b)):
            guard a.count == b.count else { return false }
            for i in a.indices where !a[i].hasShape(of: b[i]) { return false }
            return true
        default: return false
        }
    }
}
