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

    func check(_ e: DerivedExpression, declared d: DerivedAttributeDescription, entity ei: Int) throws {
        let name = entities[ei].name
        func fail(_ reason: String) -> StrataError { .invalidModel(entity: name, property: d.name, reason: reason) }
        let t = try type(of: e, entity: ei, fail: fail)
        let fits: Bool
        switch (t.type, d.type) {
        case let (a, b) where a == b: fits = true
        case let (a, b) where a.isInteger && b.isInteger: fits = true
        case let (a, b) where a.isInteger && (b == .double || b == .decimal): fits = true
        case (.double, .decimal), (.decimal, .double): fits = true
        default: fits = false
        }
        guard fits else { throw fail("expression '\(d.expression)' yields \(t.type.rawValue), the attribute is \(d.type.rawValue)") }
        if t.canBeNil && !d.isOptional {
            throw fail("expression '\(d.expression)' can be nil (an optional to-one on its path, an empty relationship, a division by zero); declare the attribute optional")
        }
        if case .aggregate(let f, _, _) = e, f == .avg, !(d.type == .double || d.type == .decimal) {
            throw fail("@avg needs a double or decimal attribute")
        }
    }

    func type(of e: DerivedExpression, entity ei: Int, fail: (String) -> StrataError) throws -> Typed {
        switch e {
        case .literal(let v):
            switch v {
            case .int: return Typed(type: .int64, canBeNil: false)
            case .double: return Typed(type: .double, canBeNil: false)
            default: throw fail("unsupported literal \(v)")
            }
        case .now:
            return Typed(type: .date, canBeNil: false)
        case .path(let p):
            return try pathType(p, entity: ei, fail: fail)
        case .lowercase(let a), .uppercase(let a), .canonical(let a):
            let t = try type(of: a, entity: ei, fail: fail)
            guard t.type == .string else { throw fail("lowercase:, uppercase: and canonical: take a string, not \(t.type.rawValue)") }
            return t
        case .negate(let a):
            let t = try type(of: a, entity: ei, fail: fail)
            guard t.type.isNumeric else { throw fail("'-' takes a number, not \(t.type.rawValue)") }
            return t
        case .arithmetic(let op, let a, let b):
            let x = try type(of: a, entity: ei, fail: fail)
            let y = try type(of: b, entity: ei, fail: fail)
            guard x.type.isNumeric, y.type.isNumeric else { throw fail("arithmetic needs numbers, not \(x.type.rawValue) and \(y.type.rawValue)") }
            let type: AttributeType
            if x.type == .decimal || y.type == .decimal { type = .decimal }
            else if x.type == .double || y.type == .double { type = .double }
            else { type = .int64 }
            return Typed(type: type, canBeNil: x.canBeNil || y.canBeNil || op == .divide)
        case .aggregate(let f, let relName, let attr):
            guard let rel = relationships[ei].first(where: { $0.name == relName }) else {
                throw fail("'\(relName)' is not a relationship of \(entities[ei].name)")
            }
            guard rel.isToMany else { throw fail("@\(f.rawValue) needs a to-many relationship; '\(relName)' is to-one") }
            if f == .count { return Typed(type: .int64, canBeNil: false) }
            guard let attr, let field = layouts[rel.targetIndex].first(where: { $0.name == attr }),
                  field.kind == .attribute || field.kind == .derived else {
                throw fail("'\(attr ?? "")' is not a stored or derived attribute of \(rel.target)")
            }
            switch f {
            case .sum:
                guard field.type.isNumeric else { throw fail("@sum needs numbers; \(rel.target).\(attr) is \(field.type.rawValue)") }
                return Typed(type: field.type.isInteger ? .int64 : field.type, canBeNil: false)
            case .avg:
                guard field.type.isNumeric else { throw fail("@avg needs numbers; \(rel.target).\(attr) is \(field.type.rawValue)") }
                return Typed(type: field.type == .decimal ? .decimal : .double, canBeNil: true)
            case .min, .max:
                guard field.type != .binary, field.type != .bool else { throw fail("@\(f.rawValue) cannot order \(field.type.rawValue) values") }
                return Typed(type: field.type, canBeNil: true)
            case .count:
                fatalError("handled above")
            }
        }
    }

    /// `a`, `rel.a`, `rel1.rel2.a`: to-one hops, then a stored or derived attribute.
    func pathType(_ path: [String], entity start: Int, fail: (String) -> StrataError) throws -> Typed {
        var ei = start
        var canBeNil = false
        for hop in path.dropLast() {
            guard let rel = relationships[ei].first(where: { $0.name == hop }) else {
                throw fail("'\(hop)' in '\(path.joined(separator: "."))' is not a relationship of \(entities[ei].name)")
            }
            guard !rel.isToMany else { throw fail("'\(hop)' in '\(path.joined(separator: "."))' is to-many; copies go through to-one relationships (use an aggregate)") }
            if rel.isOptional { canBeNil = true }
            ei = rel.targetIndex
        }
        let last = path.last!
        if entities[ei].members.contains(where: { if case .attribute(let a) = $0.kind { return a.name == last && a.isTransient }; return false }) {
            throw fail("'\(path.joined(separator: "."))' reads a transient attribute, which is never stored")
        }
        guard let field = layouts[ei].first(where: { $0.name == last }), field.kind == .attribute || field.kind == .derived else {
            throw fail("'\(last)' in '\(path.joined(separator: "."))' is not a stored or derived attribute of \(entities[ei].name)")
        }
        return Typed(type: field.type, canBeNil: canBeNil || field.isOptional)
    }
}
