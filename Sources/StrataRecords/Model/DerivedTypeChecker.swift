import StrataStorage

/// Checks that a derived expression reads what exists and yields the declared type: key paths
/// go through to-one relationships to stored or derived attributes; aggregates run over a
/// to-many relationship; a result that can be nil (an optional hop, an empty `@avg`) needs an
/// optional attribute.
struct DerivedTypeChecker {
    let entities: [Entity]
    let names: [String: Int]
    let layouts: [[Field]]
    let relationships: [[ResolvedRelationship]]

    struct Typed {
        var type: AttributeType
        var canBeNil: Bool
    }

    func check(_ expression: DerivedExpression, declared attribute: DerivedAttributeDescription,
               entity entityIndex: Int) throws {
        let name = entities[entityIndex].name
        func fail(_ reason: String) -> StrataError {
            .invalidModel(entity: name, property: attribute.name, reason: reason)
        }
        let typed = try type(of: expression, entity: entityIndex, fail: fail)
        let fits: Bool
        switch (typed.type, attribute.type) {
        case let (yielded, declared) where yielded == declared: fits = true
        case let (yielded, declared) where yielded.isInteger && declared.isInteger: fits = true
        case let (yielded, declared) where yielded.isInteger && (declared == .double || declared == .decimal):
            fits = true
        case (.double, .decimal), (.decimal, .double): fits = true
        default: fits = false
        }
        guard fits else {
            throw fail("expression '\(attribute.expression)' yields \(typed.type.rawValue), "
                       + "the attribute is \(attribute.type.rawValue)")
        }
        if typed.canBeNil && !attribute.isOptional {
            throw fail("expression '\(attribute.expression)' can be nil (an optional to-one on its path, "
                       + "an empty relationship, a division by zero); declare the attribute optional")
        }
        if case .aggregate(let function, _, _) = expression, function == .avg,
           !(attribute.type == .double || attribute.type == .decimal) {
            throw fail("@avg needs a double or decimal attribute")
        }
    }

    func type(of expression: DerivedExpression, entity entityIndex: Int,
              fail: (String) -> StrataError) throws -> Typed {
        switch expression {
        case .literal(let value):
            switch value {
            case .int: return Typed(type: .int64, canBeNil: false)
            case .double: return Typed(type: .double, canBeNil: false)
            default: throw fail("unsupported literal \(value)")
            }
        case .now:
            return Typed(type: .date, canBeNil: false)
        case .path(let path):
            return try pathType(path, entity: entityIndex, fail: fail)
        case .lowercase(let operand), .uppercase(let operand), .canonical(let operand):
            let typed = try type(of: operand, entity: entityIndex, fail: fail)
            guard typed.type == .string else {
                throw fail("lowercase:, uppercase: and canonical: take a string, not \(typed.type.rawValue)")
            }
            return typed
        case .negate(let operand):
            let typed = try type(of: operand, entity: entityIndex, fail: fail)
            guard typed.type.isNumeric else { throw fail("'-' takes a number, not \(typed.type.rawValue)") }
            return typed
        case .arithmetic(let op, let lhs, let rhs):
            let lhsType = try type(of: lhs, entity: entityIndex, fail: fail)
            let rhsType = try type(of: rhs, entity: entityIndex, fail: fail)
            guard lhsType.type.isNumeric, rhsType.type.isNumeric else {
                throw fail("arithmetic needs numbers, not \(lhsType.type.rawValue) and \(rhsType.type.rawValue)")
            }
            let type: AttributeType
            if lhsType.type == .decimal || rhsType.type == .decimal { type = .decimal }
            else if lhsType.type == .double || rhsType.type == .double { type = .double }
            else { type = .int64 }
            return Typed(type: type, canBeNil: lhsType.canBeNil || rhsType.canBeNil || op == .divide)
        case .aggregate(let function, let relName, let attr):
            guard let rel = relationships[entityIndex].first(where: { $0.name == relName }) else {
                throw fail("'\(relName)' is not a relationship of \(entities[entityIndex].name)")
            }
            guard rel.isToMany else {
                throw fail("@\(function.rawValue) needs a to-many relationship; '\(relName)' is to-one")
            }
            if function == .count { return Typed(type: .int64, canBeNil: false) }
            guard let attr, let field = layouts[rel.targetIndex].first(where: { $0.name == attr }),
                  field.kind == .attribute || field.kind == .derived else {
                throw fail("'\(attr ?? "")' is not a stored or derived attribute of \(rel.target)")
            }
            switch function {
            case .sum:
                guard field.type.isNumeric else {
                    throw fail("@sum needs numbers; \(rel.target).\(attr) is \(field.type.rawValue)")
                }
                return Typed(type: field.type.isInteger ? .int64 : field.type, canBeNil: false)
            case .avg:
                guard field.type.isNumeric else {
                    throw fail("@avg needs numbers; \(rel.target).\(attr) is \(field.type.rawValue)")
                }
                return Typed(type: field.type == .decimal ? .decimal : .double, canBeNil: true)
            case .min, .max:
                guard field.type != .binary, field.type != .bool else {
                    throw fail("@\(function.rawValue) cannot order \(field.type.rawValue) values")
                }
                return Typed(type: field.type, canBeNil: true)
            case .count:
                fatalError("handled above")
            }
        }
    }

    /// `a`, `rel.a`, `rel1.rel2.a`: to-one hops, then a stored or derived attribute.
    func pathType(_ path: [String], entity start: Int, fail: (String) -> StrataError) throws -> Typed {
        var entityIndex = start
        var canBeNil = false
        for hop in path.dropLast() {
            guard let rel = relationships[entityIndex].first(where: { $0.name == hop }) else {
                throw fail("'\(hop)' in '\(path.joined(separator: "."))' is not a relationship of "
                           + "\(entities[entityIndex].name)")
            }
            guard !rel.isToMany else {
                throw fail("'\(hop)' in '\(path.joined(separator: "."))' is to-many; "
                           + "copies go through to-one relationships (use an aggregate)")
            }
            if rel.isOptional { canBeNil = true }
            entityIndex = rel.targetIndex
        }
        let last = path.last!
        let readsTransient = entities[entityIndex].members.contains {
            if case .attribute(let attribute) = $0.kind { return attribute.name == last && attribute.isTransient }
            return false
        }
        if readsTransient {
            throw fail("'\(path.joined(separator: "."))' reads a transient attribute, which is never stored")
        }
        guard let field = layouts[entityIndex].first(where: { $0.name == last }),
              field.kind == .attribute || field.kind == .derived else {
            throw fail("'\(last)' in '\(path.joined(separator: "."))' is not a stored or derived attribute of "
                       + "\(entities[entityIndex].name)")
        }
        return Typed(type: field.type, canBeNil: canBeNil || field.isOptional)
    }
}
