import StrataStorage

/// Turns declarations into a checked model: names, relationships and inverses, row layouts,
/// derived expressions (parsed, typed, ordered), constraints and indexes.
struct ModelResolver {
    let declared: [Entity]
    var names: [String: Int] = [:]

    init(_ declared: [Entity]) { self.declared = declared }

    func fail(_ entity: String, _ property: String?, _ reason: String) -> StrataError {
        .invalidModel(entity: entity, property: property, reason: reason)
    }

    static func isValidName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first.properties.isAlphabetic else { return false }
        return s.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_" }
    }

    mutating func resolve() throws -> (entities: [EntityDescription], order: [Model.DerivedReference]) {
        guard !declared.isEmpty else { throw fail("(model)", nil, "a model needs at least one entity") }
        for (i, e) in declared.enumerated() {
            guard ModelResolver.isValidName(e.name) else { throw fail(e.name, nil, "an entity name must be letters, digits and '_', not starting with '_' or a digit") }
            guard names.updateValue(i, forKey: e.name) == nil else { throw fail(e.name, nil, "two entities have this name") }
        }
        // Pass 1: the fields of each entity (attributes, to-one keys, derived, auxiliaries).
        var layouts: [[Field]] = []
        var auxiliaries: [[String: [Int]]] = []
        for e in declared {
            var fields: [Field] = []
            var seen = Set<String>()
            let aux: [String: [Int]] = [:]
            for m in e.members {
                let name: String
                switch m.kind {
                case .attribute(let a): name = a.name
                case .relationship(let r): name = r.name
                case .derived(let d): name = d.name
                case .unique, .index: continue
                }
                guard ModelResolver.isValidName(name) else { throw fail(e.name, name, "a property name must be letters, digits and '_', not starting with '_' or a digit") }
                guard seen.insert(name).inserted else { throw fail(e.name, name, "two properties have this name") }
            }
            for m in e.members {
                // The schema text holds one line per fact and patterns, rule names and
                // expressions as written: a line break in one would make the program's own store
                // fail to open again (its stored text would read as other lines).
                if case .attribute(let a) = m.kind, let rule = a.validation.first(where: { $0.signature.contains(where: \.isNewline) }) {
                    throw fail(e.name, a.name, "the validation rule '\(rule.signature.prefix { !$0.isNewline })…' holds a line break; write \\n in a pattern")
                }
                if case .derived(let d) = m.kind, d.expression.contains(where: \.isNewline) {
                    throw fail(e.name, d.name, "the expression holds a line break; write it on one line")
                }
                if case .attribute(let a) = m.kind, !a.isTransient {
                    var d = a.defaultValue?.isNull == true ? nil : a.defaultValue  // a nil default is no default
                    if a.defaultIsObjectID { throw fail(e.name, a.name, "the default value is an ObjectID, which no attribute holds") }
                    if let v = d, !v.isNull {
                        guard let c = a.type.coerce(v) else { throw fail(e.name, a.name, "the default value: \(ValueDescription.whyNot(v, a.type))") }
                        d = c
                    }
                    fields.append(Field(name: a.name, kind: .attribute, type: a.type, isOptional: a.isOptional, defaultValue: d, validation: a.validation, renamedFrom: a.renamingIdentifier))
                }
            }
            for m in e.members {
                if case .relationship(let r) = m.kind, !r.isToMany {
                    guard let t = names[r.target] else { throw fail(e.name, r.name, "target entity '\(r.target)' is not in the model") }
                    fields.append(Field(name: r.name, kind: .toOne(target: t), type: .int64, isOptional: r.isOptional, defaultValue: nil, validation: [], renamedFrom: r.renamingIdentifier))
                }
            }
            for m in e.members {
                if case .derived(let d) = m.kind {
                    fields.append(Field(name: d.name, kind: .derived, type: d.type, isOptional: d.isOptional, defaultValue: nil, validation: [], renamedFrom: d.renamingIdentifier))
                }
            }
            layouts.append(fields)
            auxiliaries.append(aux)
        }
        // Pass 1b: auxiliary fields after every declared one (their names cannot clash: a
        // declared name cannot start with '_'), per derived attribute in declaration order
        // (FORMAT.md §12, "Row layout"). An @avg keeps its running sum and count, a double sum
        // its Neumaier compensation, a sum declared in another kind than its values (integers
        // into a double) its running sum in their kind, so each commit adjusts them exactly
        // instead of rescanning.
        for (ei, e) in declared.enumerated() {
            for m in e.members {
                guard case .derived(let d) = m.kind, let parsed = try? DerivedExpressionParser.parse(d.expression),
                      case .aggregate(let f, let relName, let attr?) = parsed, f == .sum || f == .avg else { continue }
                guard let rel = e.members.compactMap({ m -> RelationshipDescription? in if case .relationship(let r) = m.kind, r.name == relName { return r }; return nil }).first,
                      let ti = names[rel.target], let source = layouts[ti].first(where: { $0.name == attr }) else { continue }
                let kind = AggregateArithmetic.SumKind(source.type)
                let sumType = kind.type
                var aux: [Int] = []
                func add(_ suffix: String, _ type: AttributeType, _ initial: StoredValue) {
                    aux.append(layouts[ei].count)
                    layouts[ei].append(Field(name: "_\(d.name).\(suffix)", kind: .auxiliary, type: type, isOptional: false, defaultValue: initial, validation: []))
                }
                if f == .avg {
                    add("sum", sumType, sumType == .decimal ? .decimal(0) : (sumType == .double ? .double(0) : .int(0)))
                    add("count", .int64, .int(0))
                }
                if sumType == .double {
                    if f == .sum { add("sum", .double, .double(0)) }
                    add("compensation", .double, .double(0))
                } else if f == .sum && !kind.sameKind(as: d.type) {
                    add("sum", sumType, sumType == .decimal ? .decimal(0) : .int(0))
                }
                auxiliaries[ei][d.name] = aux
            }
        }
        // Pass 2: relationships with their inverses.
        var relationships: [[ResolvedRelationship]] = []
        for (ei, e) in declared.enumerated() {
            var rels: [ResolvedRelationship] = []
            for m in e.members {
                guard case .relationship(let r) = m.kind else { continue }
                guard let ti = names[r.target] else { throw fail(e.name, r.name, "target entity '\(r.target)' is not in the model") }
                let inverse = declared[ti].members.compactMap { m -> RelationshipDescription? in
                    if case .relationship(let x) = m.kind, x.name == r.inverse { return x }
                    return nil
                }.first
                guard let inverse else { throw fail(e.name, r.name, "inverse '\(r.inverse)' is not a relationship of \(r.target)") }
                guard inverse.target == e.name, inverse.inverse == r.name else {
                    throw fail(e.name, r.name, "inverse \(r.target).\(r.inverse) does not point back (it targets \(inverse.target).\(inverse.inverse))")
                }
                if !r.isToMany && !inverse.isToMany {
                    throw fail(e.name, r.name, "one-to-one relationships are not supported; make one side to-many")
                }
                if r.isToMany && r.deleteRule == .cascade && inverse.isToMany && inverse.deleteRule == .cascade && ti == ei {
                    throw fail(e.name, r.name, "a many-to-many relationship to its own entity cannot cascade both ways")
                }
                let field = r.isToMany ? nil : layouts[ei].firstIndex { $0.name == r.name }
                let inverseField = r.isToMany && !inverse.isToMany ? layouts[ti].firstIndex { $0.name == inverse.name } : nil
                rels.append(ResolvedRelationship(
                    name: r.name, target: r.target, inverse: r.inverse, isToMany: r.isToMany, deleteRule: r.deleteRule,
                    isOptional: r.isOptional, isManyToMany: r.isToMany && inverse.isToMany, targetIndex: ti,
                    field: field, inverseField: inverseField, renamedFrom: r.renamingIdentifier))
            }
            relationships.append(rels)
        }
        // Pass 3: derived attributes.
        var derived: [[ResolvedDerivedAttribute]] = []
        for (ei, e) in declared.enumerated() {
            var ds: [ResolvedDerivedAttribute] = []
            for m in e.members {
                guard case .derived(let d) = m.kind else { continue }
                let parsed: DerivedExpression
                do { parsed = try DerivedExpressionParser.parse(d.expression) } catch let f as DerivedExpressionParser.Failure {
                    throw fail(e.name, d.name, f.message)
                }
                let checker = DerivedTypeChecker(entities: declared, names: names, layouts: layouts, relationships: relationships)
                try checker.check(parsed, declared: d, entity: ei)
                var sourceType: AttributeType?
                if case .aggregate(_, let relName, let attr?) = parsed, let rel = relationships[ei].first(where: { $0.name == relName }) {
                    sourceType = layouts[rel.targetIndex].first { $0.name == attr }?.type
                }
                ds.append(ResolvedDerivedAttribute(name: d.name, type: d.type, expression: d.expression, isOptional: d.isOptional, parsed: parsed,
                                             field: layouts[ei].firstIndex { $0.name == d.name }!, auxiliaryFields: auxiliaries[ei][d.name] ?? [],
                                             aggregateSourceType: sourceType))
            }
            derived.append(ds)
        }
        // Pass 4: constraints and indexes.
        var entities: [EntityDescription] = []
        for (ei, e) in declared.enumerated() {
            var unique: [[String]] = []
            var indexes: [[String]] = []
            for m in e.members {
                let props: [String]
                let what: String
                switch m.kind {
                case .unique(let u): props = u.properties; what = "uniqueness constraint"
                case .index(let i): props = i.properties; what = "index"
                default: continue
                }
                guard !props.isEmpty else { throw fail(e.name, nil, "an empty \(what)") }
                for p in props {
                    if e.members.contains(where: { if case .attribute(let a) = $0.kind { return a.name == p && a.isTransient }; return false }) {
                        throw fail(e.name, p, "a transient attribute cannot be in a \(what) (it is never stored)")
                    }
                    guard let f = layouts[ei].first(where: { $0.name == p }), f.kind != .auxiliary else {
                        throw fail(e.name, p, "the \(what) names no stored attribute, derived attribute or to-one relationship")
                    }
                }
                if case .unique = m.kind { unique.append(props) } else { indexes.append(props) }
            }
            let attrs = e.members.compactMap { m -> AttributeDescription? in if case .attribute(let a) = m.kind { return a }; return nil }
            entities.append(EntityDescription(name: e.name, index: ei, renamingIdentifier: e.renamingIdentifier, attributes: attrs, relationships: relationships[ei],
                                              derived: derived[ei], unique: unique, indexes: indexes, fields: layouts[ei]))
        }
        let order = try DerivationOrder(entities: entities).sorted()
        return (entities, order)
    }
}
