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

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_"
        }
    }

    mutating func resolve() throws -> (entities: [EntityDescription], order: [Model.DerivedReference]) {
        guard !declared.isEmpty else { throw fail("(model)", nil, "a model needs at least one entity") }
        for (i, entity) in declared.enumerated() {
            guard ModelResolver.isValidName(entity.name) else {
                throw fail(entity.name, nil,
                           "an entity name must be letters, digits and '_', not starting with '_' or a digit")
            }
            guard names.updateValue(i, forKey: entity.name) == nil else {
                throw fail(entity.name, nil, "two entities have this name")
            }
        }
        // Pass 1: the fields of each entity (attributes, to-one keys, derived, auxiliaries).
        var layouts: [[Field]] = []
        var auxiliaries: [[String: [Int]]] = []
        for entity in declared {
            var fields: [Field] = []
            var seen = Set<String>()
            let aux: [String: [Int]] = [:]
            for member in entity.members {
                let name: String
                switch member.kind {
                case .attribute(let attribute): name = attribute.name
                case .relationship(let relationship): name = relationship.name
                case .derived(let derived): name = derived.name
                case .unique, .index, .fullText: continue
                }
                guard ModelResolver.isValidName(name) else {
                    throw fail(entity.name, name,
                               "a property name must be letters, digits and '_', not starting with '_' or a digit")
                }
                guard seen.insert(name).inserted else { throw fail(entity.name, name, "two properties have this name") }
            }
            for member in entity.members {
                // The schema text holds one line per fact and patterns, rule names and
                // expressions as written: a line break in one would make the program's own store
                // fail to open again (its stored text would read as other lines).
                if case .attribute(let attribute) = member.kind,
                   let rule = attribute.validation.first(where: { $0.signature.contains(where: \.isNewline) }) {
                    throw fail(entity.name, attribute.name,
                               "the validation rule '\(rule.signature.prefix { !$0.isNewline })…' "
                               + "holds a line break; write \\n in a pattern")
                }
                if case .derived(let derived) = member.kind, derived.expression.contains(where: \.isNewline) {
                    throw fail(entity.name, derived.name, "the expression holds a line break; write it on one line")
                }
                if case .attribute(let attribute) = member.kind, attribute.isTransient,
                   attribute.isPreservedAfterDeletion {
                    throw fail(entity.name, attribute.name,
                               "a transient attribute is never stored, so no history can preserve it")
                }
                if case .attribute(let attribute) = member.kind, !attribute.isTransient {
                    // a nil default is no default
                    var defaultValue = attribute.defaultValue?.isNull == true ? nil : attribute.defaultValue
                    if attribute.defaultIsObjectID {
                        throw fail(entity.name, attribute.name,
                                   "the default value is an ObjectID, which no attribute holds")
                    }
                    if let value = defaultValue, !value.isNull {
                        guard let coerced = attribute.type.coerce(value) else {
                            throw fail(entity.name, attribute.name,
                                       "the default value: \(ValueDescription.whyNot(value, attribute.type))")
                        }
                        defaultValue = coerced
                    }
                    fields.append(Field(name: attribute.name, kind: .attribute, type: attribute.type,
                                        isOptional: attribute.isOptional, defaultValue: defaultValue,
                                        validation: attribute.validation, renamedFrom: attribute.renamingIdentifier,
                                        isPreservedAfterDeletion: attribute.isPreservedAfterDeletion))
                }
            }
            for member in entity.members {
                if case .relationship(let relationship) = member.kind, !relationship.isToMany {
                    guard let target = names[relationship.target] else {
                        throw fail(entity.name, relationship.name,
                                   "target entity '\(relationship.target)' is not in the model")
                    }
                    fields.append(Field(name: relationship.name, kind: .toOne(target: target), type: .int64,
                                        isOptional: relationship.isOptional, defaultValue: nil, validation: [],
                                        renamedFrom: relationship.renamingIdentifier))
                }
            }
            for member in entity.members {
                if case .derived(let derived) = member.kind {
                    fields.append(Field(name: derived.name, kind: .derived, type: derived.type,
                                        isOptional: derived.isOptional, defaultValue: nil, validation: [],
                                        renamedFrom: derived.renamingIdentifier))
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
        for (entityIndex, entity) in declared.enumerated() {
            for member in entity.members {
                guard case .derived(let derived) = member.kind,
                      let parsed = try? DerivedExpressionParser.parse(derived.expression),
                      case .aggregate(let function, let relName, let attr?) = parsed,
                      function == .sum || function == .avg else { continue }
                let declaredRelationship = entity.members.compactMap { candidate -> RelationshipDescription? in
                    if case .relationship(let relationship) = candidate.kind, relationship.name == relName {
                        return relationship
                    }
                    return nil
                }.first
                guard let rel = declaredRelationship, let targetIndex = names[rel.target],
                      let source = layouts[targetIndex].first(where: { $0.name == attr }) else { continue }
                let kind = AggregateArithmetic.SumKind(source.type)
                let sumType = kind.type
                var aux: [Int] = []
                func add(_ suffix: String, _ type: AttributeType, _ initial: StoredValue) {
                    aux.append(layouts[entityIndex].count)
                    layouts[entityIndex].append(Field(name: "_\(derived.name).\(suffix)", kind: .auxiliary, type: type,
                                                      isOptional: false, defaultValue: initial, validation: []))
                }
                if function == .avg {
                    add("sum", sumType, sumType == .decimal ? .decimal(0) : (sumType == .double ? .double(0) : .int(0)))
                    add("count", .int64, .int(0))
                }
                if sumType == .double {
                    if function == .sum { add("sum", .double, .double(0)) }
                    add("compensation", .double, .double(0))
                } else if function == .sum && !kind.sameKind(as: derived.type) {
                    add("sum", sumType, sumType == .decimal ? .decimal(0) : .int(0))
                }
                auxiliaries[entityIndex][derived.name] = aux
            }
        }
        // Pass 2: relationships with their inverses.
        var relationships: [[ResolvedRelationship]] = []
        for (entityIndex, entity) in declared.enumerated() {
            var rels: [ResolvedRelationship] = []
            for member in entity.members {
                guard case .relationship(let relationship) = member.kind else { continue }
                guard let targetIndex = names[relationship.target] else {
                    throw fail(entity.name, relationship.name,
                               "target entity '\(relationship.target)' is not in the model")
                }
                let inverse = declared[targetIndex].members.compactMap { candidate -> RelationshipDescription? in
                    if case .relationship(let other) = candidate.kind, other.name == relationship.inverse {
                        return other
                    }
                    return nil
                }.first
                guard let inverse else {
                    throw fail(entity.name, relationship.name,
                               "inverse '\(relationship.inverse)' is not a relationship of \(relationship.target)")
                }
                guard inverse.target == entity.name, inverse.inverse == relationship.name else {
                    throw fail(entity.name, relationship.name,
                               "inverse \(relationship.target).\(relationship.inverse) does not point back "
                               + "(it targets \(inverse.target).\(inverse.inverse))")
                }
                if !relationship.isToMany && !inverse.isToMany {
                    throw fail(entity.name, relationship.name,
                               "one-to-one relationships are not supported; make one side to-many")
                }
                if relationship.isToMany && relationship.deleteRule == .cascade && inverse.isToMany
                    && inverse.deleteRule == .cascade && targetIndex == entityIndex {
                    throw fail(entity.name, relationship.name,
                               "a many-to-many relationship to its own entity cannot cascade both ways")
                }
                let field = relationship.isToMany
                    ? nil : layouts[entityIndex].firstIndex { $0.name == relationship.name }
                let inverseField = relationship.isToMany && !inverse.isToMany
                    ? layouts[targetIndex].firstIndex { $0.name == inverse.name } : nil
                rels.append(ResolvedRelationship(
                    name: relationship.name, target: relationship.target, inverse: relationship.inverse,
                    isToMany: relationship.isToMany, deleteRule: relationship.deleteRule,
                    isOptional: relationship.isOptional, isManyToMany: relationship.isToMany && inverse.isToMany,
                    targetIndex: targetIndex, field: field, inverseField: inverseField,
                    renamedFrom: relationship.renamingIdentifier))
            }
            relationships.append(rels)
        }
        // Pass 3: derived attributes.
        var derived: [[ResolvedDerivedAttribute]] = []
        for (entityIndex, entity) in declared.enumerated() {
            var resolved: [ResolvedDerivedAttribute] = []
            for member in entity.members {
                guard case .derived(let declaration) = member.kind else { continue }
                let parsed: DerivedExpression
                do {
                    parsed = try DerivedExpressionParser.parse(declaration.expression)
                } catch let failure as DerivedExpressionParser.Failure {
                    throw fail(entity.name, declaration.name, failure.message)
                }
                let checker = DerivedTypeChecker(entities: declared, names: names, layouts: layouts,
                                                 relationships: relationships)
                try checker.check(parsed, declared: declaration, entity: entityIndex)
                var sourceType: AttributeType?
                if case .aggregate(_, let relName, let attr?) = parsed,
                   let rel = relationships[entityIndex].first(where: { $0.name == relName }) {
                    sourceType = layouts[rel.targetIndex].first { $0.name == attr }?.type
                }
                resolved.append(ResolvedDerivedAttribute(
                    name: declaration.name, type: declaration.type, expression: declaration.expression,
                    isOptional: declaration.isOptional, parsed: parsed,
                    field: layouts[entityIndex].firstIndex { $0.name == declaration.name }!,
                    auxiliaryFields: auxiliaries[entityIndex][declaration.name] ?? [], aggregateSourceType: sourceType))
            }
            derived.append(resolved)
        }
        // Pass 4: constraints and indexes.
        var entities: [EntityDescription] = []
        for (entityIndex, entity) in declared.enumerated() {
            var unique: [[String]] = []
            var indexes: [[String]] = []
            var fullText: [[String]] = []
            for member in entity.members {
                let props: [String]
                let what: String
                switch member.kind {
                case .unique(let constraint): props = constraint.properties; what = "uniqueness constraint"
                case .index(let index): props = index.properties; what = "index"
                case .fullText(let index): props = index.properties; what = "word index"
                default: continue
                }
                guard !props.isEmpty else { throw fail(entity.name, nil, "an empty \(what)") }
                for property in props {
                    let isTransient = entity.members.contains {
                        if case .attribute(let attribute) = $0.kind {
                            return attribute.name == property && attribute.isTransient
                        }
                        return false
                    }
                    if isTransient {
                        throw fail(entity.name, property,
                                   "a transient attribute cannot be in a \(what) (it is never stored)")
                    }
                    guard let field = layouts[entityIndex].first(where: { $0.name == property }),
                          field.kind != .auxiliary else {
                        throw fail(entity.name, property,
                                   "the \(what) names no stored attribute, derived attribute or to-one relationship")
                    }
                }
                switch member.kind {
                case .unique: unique.append(props)
                case .fullText:
                    for property in props {
                        let field = layouts[entityIndex].first { $0.name == property }!
                        guard field.type == .string, field.kind == .attribute || field.kind == .derived else {
                            throw fail(entity.name, property, "a word index takes string attributes and derived "
                                       + "attributes, not \(field.kind == .attribute || field.kind == .derived ? field.type.rawValue : "a relationship")")
                        }
                    }
                    guard Set(props).count == props.count else { throw fail(entity.name, nil, "a word index names a property twice") }
                    fullText.append(props)
                default: indexes.append(props)
                }
            }
            let attrs = entity.members.compactMap { candidate -> AttributeDescription? in
                if case .attribute(let attribute) = candidate.kind { return attribute }
                return nil
            }
            entities.append(EntityDescription(name: entity.name, index: entityIndex,
                                              renamingIdentifier: entity.renamingIdentifier, attributes: attrs,
                                              relationships: relationships[entityIndex], derived: derived[entityIndex],
                                              unique: unique, indexes: indexes, fullText: fullText,
                                              fields: layouts[entityIndex]))
        }
        let order = try DerivationOrder(entities: entities).sorted()
        return (entities, order)
    }
}
