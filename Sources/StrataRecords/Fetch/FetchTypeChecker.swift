import StrataStorage

/// Checks a fetch request against the model before any row is read, so that a mistake is an
/// error instead of an empty result: every key path names stored properties, sorts run over
/// single values, and every comparison compares values that can compare.
///
/// The rules, for each pair of values the two sides of a comparison can produce (the elements
/// of a list, the values through a to-many key path):
/// - int, double and decimal compare with each other (by numeric value); other kinds only
///   with their own kind: bool, string, date, UUID, binary;
/// - an object (a to-one or to-many relationship, `SELF`) compares with objects of the same
///   entity and with integers (primary keys);
/// - `nil` compares with anything by `==`, `!=` and `IN`, but does not order;
/// - `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` and `MATCHES` take strings on both sides;
/// - `IN` takes a list or a to-many key path (its elements compare by `==`), or a string on
///   both sides (substring containment); `BETWEEN` takes a list of two bounds that order
///   against the left side;
/// - `@count` counts any to-many key path; `@sum` and `@avg` need numbers; `@min` and `@max`
///   take the type of their values; each needs a key path through a to-many relationship.
///
/// The evaluator itself stays lenient (a mismatched pair is false), since it also runs over
/// subjects without a model.
struct FetchTypeChecker {
    let model: Model
    let entity: EntityDescription
    /// Whether `$name` variables may appear: only while preparing a fetch (each compares with
    /// anything then; the prepared fetch checks the request again with their values).
    var allowsVariables = false

    /// What one side of a comparison yields, as far as the model says. Plain values only (no
    /// strings or arrays), so checking costs no reference counting: a fetch checks every time
    /// it runs, and a message is built from the expression only when there is an error.
    struct Operand {
        enum Kind: Equatable {
            case null, bool, number, string, date, uuid, binary
            case object(entity: Int)
            /// `$name`: any value until one is given (a prepared fetch checks again with it).
            case variable
        }
        enum Role { case constant, attribute, toOne, toMany, this, aggregate }
        var kind: Kind
        /// An integer (a key path to an integer attribute, an integer constant, `@count`):
        /// the only numbers that compare with objects.
        var isInteger = false
        /// The value was reached through a to-many relationship: many values.
        var isMany = false
        var role: Role
        /// The attribute's type (an attribute, or the values an aggregate takes).
        var type: AttributeType? = nil
        /// The entity whose property the key path ends at.
        var owner = 0
    }

    func check(_ request: FetchRequest) throws {
        guard request.offset >= 0, (request.limit ?? 0) >= 0 else {
            throw StrataError.invalidFetch("offset (\(request.offset)) and limit (\(request.limit.map(String.init) ?? "nil")) must not be negative")
        }
        for s in request.sortDescriptors {
            let path = s.keyPath.split(separator: ".").map(String.init)
            if try resolve(path).isMany {
                throw StrataError.invalidFetch("cannot sort by '\(s.keyPath)': it runs through a to-many relationship, so it has many values")
            }
        }
        if let p = request.predicate { try check(p) }
    }

    func check(_ predicate: FetchPredicate) throws {
        switch predicate {
        case .constant: return
        case .comparison(let c): try check(c)
        case .and(let ps), .or(let ps): for p in ps { try check(p) }
        case .not(let p): try check(p)
        }
    }

    private enum Rule { case equality, order, string }

    func check(_ c: Comparison) throws {
        let rule: Rule
        switch c.op {
        case .equal, .notEqual:
            rule = .equality
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            rule = .order
        case .beginsWith, .endsWith, .contains, .like, .matches:
            rule = .string
        case .between:
            guard case .list(let bounds) = c.rhs, bounds.count == 2 else {
                throw StrataError.invalidFetch("'\(c)': BETWEEN needs a list of two bounds")
            }
            rule = .order
        case .in:
            // `"ab" IN name`: substring containment when the right side is one string.
            if case .list = c.rhs {
                rule = .equality
            } else {
                var containment = false
                try forEachOperand(c.rhs) { operand, _ in containment = operand.kind == .string && !operand.isMany }
                rule = containment ? .string : .equality
            }
        }
        // The usual comparison, a key path against a constant, without closures.
        if case .keyPath(let path) = c.lhs, case .constant(let v) = c.rhs {
            let a = try resolve(path), b = constant(v)
            if let reason = mismatch(a, b, rule, c.op) {
                throw StrataError.invalidFetch("'\(c)': " + reason.message(a: text(a, c.lhs), b: text(b, c.rhs), op: c.op))
            }
            return
        }
        // Every value the left side can produce against every value of the right side, with
        // no arrays built.
        try forEachOperand(c.lhs) { a, x in
            try forEachOperand(c.rhs) { b, y in
                if let reason = mismatch(a, b, rule, c.op) {
                    throw StrataError.invalidFetch("'\(c)': " + reason.message(a: text(a, x), b: text(b, y), op: c.op))
                }
            }
        }
    }

    private enum Mismatch {
        case leftNotString, rightNotString, nilDoesNotOrder, kinds

        func message(a: String, b: String, op: ComparisonOperator) -> String {
            switch self {
            case .leftNotString: return op.rawValue + " compares strings, and " + a + " is not one"
            case .rightNotString: return op.rawValue + " compares strings, and " + b + " is not one"
            case .nilDoesNotOrder: return "nil does not order (compare it with == or !=)"
            case .kinds: return a + " cannot be compared with " + b
            }
        }
    }

    /// Why `a` and `b` cannot be compared under `rule`, or nil when they can.
    private func mismatch(_ a: Operand, _ b: Operand, _ rule: Rule, _ op: ComparisonOperator) -> Mismatch? {
        if a.kind == .variable || b.kind == .variable { return nil }
        switch rule {
        case .string:
            if a.kind != .string { return .leftNotString }
            if b.kind != .string { return .rightNotString }
            return nil
        case .order:
            if a.kind == .null || b.kind == .null { return .nilDoesNotOrder }
        case .equality:
            if a.kind == .null || b.kind == .null { return nil }
        }
        switch (a.kind, b.kind) {
        case (.object(let x), .object(let y)):
            if x == y { return nil }
        case (.object, .number):
            if b.isInteger { return nil }
        case (.number, .object):
            if a.isInteger { return nil }
        default:
            if a.kind == b.kind { return nil }
        }
        return .kinds
    }

    /// Calls `body` with each operand an expression yields (one, or one per element of a
    /// list) and the expression that yielded it.
    private func forEachOperand(_ x: FetchExpression, _ body: (Operand, FetchExpression) throws -> Void) throws {
        switch x {
        case .constant(let v):
            try body(constant(v), x)
        case .keyPath(let path):
            try body(try resolve(path), x)
        case .aggregate(let function, let path):
            try body(try aggregate(function, path), x)
        case .list(let items):
            for item in items { try forEachOperand(item, body) }
        case .variable(let name):
            guard allowsVariables else { throw StrataError.invalidFetch(PreparedFetch.unboundMessage(name)) }
            try body(Operand(kind: .variable, role: .constant), x)
        }
    }

    private func constant(_ v: StoredValue) -> Operand {
        switch v {
        case .null: return Operand(kind: .null, role: .constant)
        case .bool: return Operand(kind: .bool, role: .constant)
        case .int: return Operand(kind: .number, isInteger: true, role: .constant)
        case .double, .decimal: return Operand(kind: .number, role: .constant)
        case .string: return Operand(kind: .string, role: .constant)
        case .date: return Operand(kind: .date, role: .constant)
        case .uuid: return Operand(kind: .uuid, role: .constant)
        case .binary: return Operand(kind: .binary, role: .constant)
        }
    }

    private static func kind(_ type: AttributeType) -> Operand.Kind {
        switch type {
        case .bool: return .bool
        case .int16, .int32, .int64, .double, .decimal: return .number
        case .string: return .string
        case .date: return .date
        case .uuid: return .uuid
        case .binary: return .binary
        }
    }

    /// What a key path reaches; throws for a name that is unknown, transient, or used as a
    /// relationship though it is an attribute.
    func resolve(_ path: [String]) throws -> Operand {
        var e = entity
        var many = false
        for (depth, name) in path.enumerated() {
            let last = depth == path.count - 1
            if let f = e.fieldIndex[name] {
                // The field's parts, not the field: copying it would retain its name and rules.
                let kind = e.fields[f].kind
                if kind != .auxiliary {
                    if case .toOne(let target) = kind {
                        if last { return Operand(kind: .object(entity: target), isMany: many, role: .toOne, owner: e.index) }
                        e = model.entities[target]
                        continue
                    }
                    guard last else {
                        throw StrataError.invalidFetch("'\(name)' in '\(Self.dotted(path))' is an attribute of \(e.name), not a relationship")
                    }
                    let type = e.fields[f].type
                    return Operand(kind: Self.kind(type), isInteger: type.isInteger, isMany: many,
                                   role: .attribute, type: type, owner: e.index)
                }
            }
            if e.isTransient(name) {
                throw StrataError.invalidFetch("'\(name)' of \(e.name) is transient: it is never stored, so a stored fetch cannot use it")
            }
            guard let rel = e.relationship(name) else {
                let context = path.count > 1 ? " (in '\(Self.dotted(path))')" : ""
                throw StrataError.invalidFetch("\(e.name) has no property '\(name)'" + context)
            }
            // To-one relationships are fields, handled above: this one is to-many.
            many = true
            if last { return Operand(kind: .object(entity: rel.targetIndex), isMany: true, role: .toMany, owner: e.index) }
            e = model.entities[rel.targetIndex]
        }
        return Operand(kind: .object(entity: e.index), role: .this, owner: e.index)
    }

    private func aggregate(_ function: AggregateFunction, _ path: [String]) throws -> Operand {
        let values = try resolve(path)
        guard values.isMany else {
            throw StrataError.invalidFetch("'\(Self.dotted(path)).@\(function.rawValue)': @\(function.rawValue) needs a key path through a to-many relationship")
        }
        var result = Operand(kind: values.kind, isInteger: values.isInteger, role: .aggregate, type: values.type, owner: values.owner)
        switch function {
        case .count:
            result.kind = .number
            result.isInteger = true
        case .sum, .avg:
            guard values.kind == .number else {
                let what = text(values, .keyPath(path))
                throw StrataError.invalidFetch("'\(Self.dotted(path)).@\(function.rawValue)': @\(function.rawValue) adds numbers, and \(what) is not a number")
            }
            result.isInteger = function == .sum && values.isInteger
        case .min, .max:
            break
        }
        return result
    }

    private static func dotted(_ path: [String]) -> String { path.isEmpty ? "SELF" : path.joined(separator: ".") }

    /// For messages: `title (string of Item)`, `5 (an integer)`: `operand`, which `expression`
    /// yielded.
    func text(_ operand: Operand, _ expression: FetchExpression) -> String {
        let owner: String = model.entities[operand.owner].name
        switch expression {
        case .constant(let v):
            let kind: String
            switch v {
            case .null: return "nil"
            case .bool: kind = "a bool"
            case .int: kind = "an integer"
            case .double: kind = "a double"
            case .decimal: kind = "a decimal"
            case .string: kind = "a string"
            case .date: kind = "a date"
            case .uuid: kind = "a UUID"
            case .binary: kind = "binary"
            }
            return v.description + " (" + kind + ")"
        case .keyPath(let path):
            let name = Self.dotted(path)
            switch operand.role {
            case .toOne, .toMany:
                var target = owner
                if case .object(let t) = operand.kind { target = model.entities[t].name }
                let side = operand.role == Operand.Role.toOne ? "one" : "many"
                return name + " (a to-" + side + " relationship of " + owner + " to " + target + ")"
            case .this:
                return "SELF (" + owner + ")"
            default:
                let type = operand.type?.rawValue ?? "value"
                let through = operand.isMany ? ", through a to-many relationship" : ""
                return name + " (" + type + " of " + owner + through + ")"
            }
        case .aggregate(let function, let path):
            var what = "a count"
            if function != AggregateFunction.count {
                what = "an aggregate"
                if let type = operand.type { what += " of " + type.rawValue + " values" }
            }
            return Self.dotted(path) + ".@" + function.rawValue + " (" + what + ")"
        case .list:
            return "a list"
        case .variable(let name):
            return "$" + name
        }
    }
}
