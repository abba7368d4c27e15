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
        case .comparison(var comparison):
            guard let lhs = comparison.lhs.abstracted(&variables),
                  let rhs = comparison.rhs.abstracted(&variables) else { return nil }
            comparison.lhs = lhs
            comparison.rhs = rhs
            return .comparison(comparison)
        case .and(let terms), .or(let terms):
            var out: [FetchPredicate] = []
            out.reserveCapacity(terms.count)
            for term in terms {
                guard let abstracted = term.abstracted(&variables) else { return nil }
                out.append(abstracted)
            }
            if case .and = self { return .and(out) }
            return .or(out)
        case .not(let operand): return operand.abstracted(&variables).map { .not($0) }
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
                guard let abstracted = item.abstracted(&variables) else { return nil }
                out.append(abstracted)
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
              sortDescriptors == request.sortDescriptors, let shape = predicate,
              let other = request.predicate else { return false }
        return shape.hasShape(of: other)
    }
}

extension FetchPredicate {
    /// Hashes the structure (not the constants, which are appended to `constants` in the
    /// order ``FetchRequest/shape()`` makes them variables); false when a variable appears.
    func hashShape(into hasher: inout ShapeHasher, constants: inout [StoredValue]) -> Bool {
        switch self {
        case .constant(let value):
            hasher.combine(value ? 1 : 2)
            return true
        case .comparison(let comparison):
            hasher.combine(3)
            hasher.combine(comparison.op.rawValue)
            hasher.combine(comparison.quantifier.rawValue)
            hasher.combine(UInt64(comparison.options.rawValue))
            return comparison.lhs.hashShape(into: &hasher, constants: &constants)
                && comparison.rhs.hashShape(into: &hasher, constants: &constants)
        case .and(let terms), .or(let terms):
            if case .and = self { hasher.combine(4) } else { hasher.combine(5) }
            hasher.combine(UInt64(terms.count))
            for term in terms where !term.hashShape(into: &hasher, constants: &constants) { return false }
            return true
        case .not(let operand):
            hasher.combine(6)
            return operand.hashShape(into: &hasher, constants: &constants)
        }
    }

    /// Whether `other` is this predicate with constants for its variables.
    func hasShape(of other: FetchPredicate) -> Bool {
        switch (self, other) {
        case (.constant(let lhs), .constant(let rhs)): return lhs == rhs
        case (.comparison(let lhs), .comparison(let rhs)):
            return lhs.op == rhs.op && lhs.quantifier == rhs.quantifier && lhs.options == rhs.options
                && lhs.lhs.hasShape(of: rhs.lhs) && lhs.rhs.hasShape(of: rhs.rhs)
        case (.and(let lhs), .and(let rhs)), (.or(let lhs), .or(let rhs)):
            guard lhs.count == rhs.count else { return false }
            for i in lhs.indices where !lhs[i].hasShape(of: rhs[i]) { return false }
            return true
        case (.not(let lhs), .not(let rhs)): return lhs.hasShape(of: rhs)
        default: return false
        }
    }
}

extension FetchExpression {
    fileprivate func hashShape(into hasher: inout ShapeHasher, constants: inout [StoredValue]) -> Bool {
        switch self {
        case .constant(let value):
            hasher.combine(7)
            constants.append(value)
        case .keyPath(let path):
            hasher.combine(8)
            for component in path { hasher.combine(component) }
        case .aggregate(let function, let path):
            hasher.combine(9)
            hasher.combine(function.rawValue)
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
        case (.keyPath(let lhs), .keyPath(let rhs)): return lhs == rhs
        case (.aggregate(let lhsFunction, let lhs), .aggregate(let rhsFunction, let rhs)):
            return lhsFunction == rhsFunction && lhs == rhs
        case (.list(let lhs), .list(let rhs)):
            guard lhs.count == rhs.count else { return false }
            for i in lhs.indices where !lhs[i].hasShape(of: rhs[i]) { return false }
            return true
        default: return false
        }
    }
}

/// FNV-1a over the shape's parts: the cache hashes a request on every fetch, and SipHash
/// (`Hasher`) costs several times more for the short strings a shape holds. Collisions only
/// cost a comparison (shapes are compared after the hash matches), and the process's own
/// requests are hashed, not an adversary's.
struct ShapeHasher {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func combine(_ word: UInt64) {
        value = (value ^ word) &* 0x0000_0100_0000_01B3
    }

    mutating func combine(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        }
        combine(0xFF)   // ends the string: "ab" + "c" is not "a" + "bc"
    }
}
