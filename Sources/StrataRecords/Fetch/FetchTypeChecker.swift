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
            let limit = request.limit.map(String.init) ?? "nil"
            throw StrataError.invalidFetch("offset (\(request.offset)) and limit (\(limit)) must not be negative")
        }
        for sortDescriptor in request.sortDescriptors {
            let path = sortDescriptor.keyPath.split(separator: ".").map(String.init)
            if try resolve(path).isMany {
                throw StrataError.invalidFetch("cannot sort by '\(sortDescriptor.keyPath)': it runs through a "
                                               + "to-many relationship, so it has many values")
            }
        }
        if let predicate = request.predicate { try check(predicate) }
    }

    func check(_ predicate: FetchPredicate) throws {
        switch predicate {
        case .constant: return
        case .comparison(let comparison): try check(comparison)
        case .and(let terms), .or(let terms): for term in terms { try check(term) }
        case .not(let operand): try check(operand)
        }
    }

    private enum Rule { case equality, order, string }

    func check(_ comparison: Comparison) throws {
        let rule: Rule
        switch comparison.op {
        case .containsWords, .containsAnyWord:
            try checkWords(comparison)
            return
        case .equal, .notEqual:
            rule = .equality
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            rule = .order
        case .beginsWith, .endsWith, .contains, .like, .matches:
            rule = .string
        case .between:
            guard case .list(let bounds) = comparison.rhs, bounds.count == 2 else {
                throw StrataError.invalidFetch("'\(comparison)': BETWEEN needs a list of two bounds")
            }
            rule = .order
        case .in:
            // `"ab" IN name`: substring containment when the right side is one string.
            if case .list = comparison.rhs {
                rule = .equality
            } else {
                var containment = false
                try forEachOperand(comparison.rhs) { operand, _ in
                    containment = operand.kind == .string && !operand.isMany
                }
                rule = containment ? .string : .equality
            }
        }
        // The usual comparison, a key path against a constant, without closures.
        if case .keyPath(let path) = comparison.lhs, case .constant(let value) = comparison.rhs {
            let lhs = try resolve(path), rhs = constant(value)
            if let reason = mismatch(lhs, rhs, rule, comparison.op) {
                let message = reason.message(lhs: text(lhs, comparison.lhs), rhs: text(rhs, comparison.rhs),
                                             op: comparison.op)
                throw StrataError.invalidFetch("'\(comparison)': " + message)
            }
            return
        }
        // Every value the left side can produce against every value of the right side, with
        // no arrays built.
        try forEachOperand(comparison.lhs) { lhs, lhsExpression in
            try forEachOperand(comparison.rhs) { rhs, rhsExpression in
                if let reason = mismatch(lhs, rhs, rule, comparison.op) {
                    let message = reason.message(lhs: text(lhs, lhsExpression), rhs: text(rhs, rhsExpression),
                                                 op: comparison.op)
                    throw StrataError.invalidFetch("'\(comparison)': " + message)
                }
            }
        }
    }

    /// `a CONTAINSWORDS q`, `{a, b} CONTAINSANYWORD q`: string attributes of the entity itself
    /// (stored or derived), each once, against a string that holds a word (or a variable).
    private func checkWords(_ comparison: Comparison) throws {
        let op = comparison.op.rawValue
        guard comparison.quantifier == .direct else {
            throw StrataError.invalidFetch("'\(comparison)': \(op) takes no quantifier (it reads attributes of "
                                           + "the object itself)")
        }
        guard comparison.options.isEmpty else {
            throw StrataError.invalidFetch("'\(comparison)': \(op) takes no options: words are always compared "
                                           + "folded, as canonical: folds them")
        }
        guard let names = comparison.lhs.wordProperties else {
            throw StrataError.invalidFetch("'\(comparison)': the left side of \(op) is a string attribute or a "
                                           + "list of them, as in {title, body}")
        }
        guard !names.isEmpty, Set(names).count == names.count else {
            throw StrataError.invalidFetch("'\(comparison)': \(op) needs its attributes each once")
        }
        for name in names {
            let operand = try resolve([name])
            guard operand.role == .attribute, operand.kind == .string else {
                throw StrataError.invalidFetch("'\(comparison)': \(op) reads words of strings, and "
                                               + "\(text(operand, .keyPath([name]))) is not one")
            }
        }
        switch comparison.rhs {
        case .constant(.string(let query)):
            _ = try WordQuery(query, match: .allWords)
        case .variable(let name):
            guard allowsVariables else { throw StrataError.invalidFetch(PreparedFetch.unboundMessage(name)) }
        default:
            throw StrataError.invalidFetch("'\(comparison)': \(op) takes a string of words on its right, "
                                           + "not \(comparison.rhs)")
        }
    }

    private enum Mismatch {
        case leftNotString, rightNotString, nilDoesNotOrder, kinds

        func message(lhs: String, rhs: String, op: ComparisonOperator) -> String {
            switch self {
            case .leftNotString: return op.rawValue + " compares strings, and " + lhs + " is not one"
            case .rightNotString: return op.rawValue + " compares strings, and " + rhs + " is not one"
            case .nilDoesNotOrder: return "nil does not order (compare it with == or !=)"
            case .kinds: return lhs + " cannot be compared with " + rhs
            }
        }
    }

    /// Why `lhs` and `rhs` cannot be compared under `rule`, or nil when they can.
    private func mismatch(_ lhs: Operand, _ rhs: Operand, _ rule: Rule, _ op: ComparisonOperator) -> Mismatch? {
        if lhs.kind == .variable || rhs.kind == .variable { return nil }
        switch rule {
        case .string:
            if lhs.kind != .string { return .leftNotString }
            if rhs.kind != .string { return .rightNotString }
            return nil
        case .order:
            if lhs.kind == .null || rhs.kind == .null { return .nilDoesNotOrder }
        case .equality:
            if lhs.kind == .null || rhs.kind == .null { return nil }
        }
        switch (lhs.kind, rhs.kind) {
        case (.object(let lhsEntity), .object(let rhsEntity)):
            if lhsEntity == rhsEntity { return nil }
        case (.object, .number):
            if rhs.isInteger { return nil }
        case (.number, .object):
            if lhs.isInteger { return nil }
        default:
            if lhs.kind == rhs.kind { return nil }
        }
        return .kinds
    }

    /// Calls `body` with each operand an expression yields (one, or one per element of a
    /// list) and the expression that yielded it.
    private func forEachOperand(_ expression: FetchExpression,
                                _ body: (Operand, FetchExpression) throws -> Void) throws {
        switch expression {
        case .constant(let value):
            try body(constant(value), expression)
        case .keyPath(let path):
            try body(try resolve(path), expression)
        case .aggregate(let function, let path):
            try body(try aggregate(function, path), expression)
        case .list(let items):
            for item in items { try forEachOperand(item, body) }
        case .variable(let name):
            guard allowsVariables else { throw StrataError.invalidFetch(PreparedFetch.unboundMessage(name)) }
            try body(Operand(kind: .variable, role: .constant), expression)
        }
    }

    private func constant(_ value: StoredValue) -> Operand {
        switch value {
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
        var reached = entity
        var many = false
        for (depth, name) in path.enumerated() {
            let last = depth == path.count - 1
            if let field = reached.fieldIndex[name] {
                // The field's parts, not the field: copying it would retain its name and rules.
                let kind = reached.fields[field].kind
                if kind != .auxiliary {
                    if case .toOne(let target) = kind {
                        if last {
                            return Operand(kind: .object(entity: target), isMany: many, role: .toOne,
                                           owner: reached.index)
                        }
                        reached = model.entities[target]
                        continue
                    }
                    guard last else {
                        throw StrataError.invalidFetch("'\(name)' in '\(Self.dotted(path))' is an attribute of "
                                                       + "\(reached.name), not a relationship")
                    }
                    let type = reached.fields[field].type
                    return Operand(kind: Self.kind(type), isInteger: type.isInteger, isMany: many,
                                   role: .attribute, type: type, owner: reached.index)
                }
            }
            if reached.isTransient(name) {
                throw StrataError.invalidFetch("'\(name)' of \(reached.name) is transient: it is never stored, "
                                               + "so a stored fetch cannot use it")
            }
            guard let rel = reached.relationship(name) else {
                let context = path.count > 1 ? " (in '\(Self.dotted(path))')" : ""
                throw StrataError.invalidFetch("\(reached.name) has no property '\(name)'" + context)
            }
            // To-one relationships are fields, handled above: this one is to-many.
            many = true
            if last {
                return Operand(kind: .object(entity: rel.targetIndex), isMany: true, role: .toMany,
                               owner: reached.index)
            }
            reached = model.entities[rel.targetIndex]
        }
        return Operand(kind: .object(entity: reached.index), role: .this, owner: reached.index)
    }

    private func aggregate(_ function: AggregateFunction, _ path: [String]) throws -> Operand {
        let values = try resolve(path)
        guard values.isMany else {
            throw StrataError.invalidFetch("'\(Self.dotted(path)).@\(function.rawValue)': @\(function.rawValue) "
                                           + "needs a key path through a to-many relationship")
        }
        var result = Operand(kind: values.kind, isInteger: values.isInteger, role: .aggregate, type: values.type,
                             owner: values.owner)
        switch function {
        case .count:
            result.kind = .number
            result.isInteger = true
        case .sum, .avg:
            guard values.kind == .number else {
                let what = text(values, .keyPath(path))
                throw StrataError.invalidFetch("'\(Self.dotted(path)).@\(function.rawValue)': "
                                               + "@\(function.rawValue) adds numbers, and \(what) is not a number")
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
        case .constant(let value):
            let kind: String
            switch value {
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
            return value.description + " (" + kind + ")"
        case .keyPath(let path):
            let name = Self.dotted(path)
            switch operand.role {
            case .toOne, .toMany:
                var target = owner
                if case .object(let targetIndex) = operand.kind { target = model.entities[targetIndex].name }
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
