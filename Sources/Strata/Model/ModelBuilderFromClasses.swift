import StrataRecords
import StrataStorage

/// Builds the record layer's `Model` from model classes' schemas: one entity per class,
/// relationships paired with their inverses.
struct ModelBuilderFromClasses {
    let schemas: [EntitySchema]

    func build(version: Int = 1) throws -> Model { try Model(version: version, entities: entities()) }

    /// The entities the classes declare, checked as far as the classes go (the model checks the rest).
    func entities() throws -> [Entity] {
        var byClass: [ObjectIdentifier: EntitySchema] = [:]
        for schema in schemas {
            if let error = schema.buildError { throw error }
            if byClass[ObjectIdentifier(schema.objectClass)] != nil {
                throw StrataError.invalidModel(entity: schema.name, property: nil, reason: "the class is listed twice")
            }
            byClass[ObjectIdentifier(schema.objectClass)] = schema
        }
        // Declared inverses, then the other sides found from them.
        var inverse: [String: String] = [:]  // "Entity.rel" -> inverse name
        for schema in schemas {
            for (slot, property) in schema.properties.enumerated() {
                guard let relationship = schema.relationship(at: slot), relationship.inverse != nil else { continue }
                guard let target = byClass[ObjectIdentifier(relationship.target)] else {
                    throw StrataError.invalidModel(entity: schema.name, property: property.name,
                                                   reason: "its target class \(relationship.target) "
                                                       + "is not in the container's classes")
                }
                guard let name = schema.declaredInverse(ofSlot: slot), let inverseSlot = target.slotByName[name],
                      target.properties[inverseSlot].isRelationship else {
                    throw StrataError.invalidModel(entity: schema.name, property: property.name,
                                                   reason: "its inverse key path does not name a relationship "
                                                       + "of \(target.name)")
                }
                inverse["\(schema.name).\(property.name)"] = name
                if let other = inverse["\(target.name).\(name)"], other != property.name {
                    throw StrataError.invalidModel(entity: target.name, property: name,
                                                   reason: "is declared the inverse of both "
                                                       + "\(schema.name).\(property.name) and \(schema.name).\(other)")
                }
                inverse["\(target.name).\(name)"] = property.name
            }
        }
        var entities: [Entity] = []
        for schema in schemas {
            var members: [EntityMember] = []
            for property in schema.properties {
                switch property.kind {
                case .attribute(let attribute):
                    members.append(EntityMember(StrataRecords.AttributeDescription(
                        property.name, attribute.type, optional: attribute.isOptional, default: attribute.defaultValue,
                        transient: attribute.isTransient, validation: attribute.validation,
                        renamedFrom: attribute.renamedFrom)))
                    if attribute.options.contains(.unique) { members.append(EntityMember(Unique(property.name))) }
                    if attribute.options.contains(.indexed) { members.append(EntityMember(FetchIndex(property.name))) }
                case .derived(let derived):
                    members.append(EntityMember(StrataRecords.DerivedAttributeDescription(
                        property.name, derived.type, derived.expression, optional: derived.isOptional,
                        renamedFrom: derived.renamedFrom)))
                    if derived.options.contains(.unique) { members.append(EntityMember(Unique(property.name))) }
                    if derived.options.contains(.indexed) { members.append(EntityMember(FetchIndex(property.name))) }
                case .toOne(let relationship), .toMany(let relationship):
                    guard let target = byClass[ObjectIdentifier(relationship.target)] else {
                        throw StrataError.invalidModel(entity: schema.name, property: property.name,
                                                       reason: "its target class \(relationship.target) "
                                                           + "is not in the container's classes")
                    }
                    let inverseName = try inverse["\(schema.name).\(property.name)"]
                        ?? soleInverse(of: property.name, in: schema, target: target)
                    if relationship.isToMany {
                        members.append(EntityMember(StrataRecords.RelationshipDescription(
                            property.name, toMany: target.name, inverse: inverseName,
                            deleteRule: relationship.deleteRule, renamedFrom: relationship.renamedFrom)))
                    } else {
                        members.append(EntityMember(StrataRecords.RelationshipDescription(
                            property.name, toOne: target.name, inverse: inverseName,
                            deleteRule: relationship.deleteRule, optional: relationship.isOptional,
                            renamedFrom: relationship.renamedFrom)))
                    }
                }
            }
            for unique in schema.objectClass.uniquenessConstraints { members.append(EntityMember(Unique(unique))) }
            for fetchIndex in schema.objectClass.fetchIndexes { members.append(EntityMember(FetchIndex(fetchIndex))) }
            for words in schema.objectClass.fullTextIndexes { members.append(EntityMember(FullTextIndex(words))) }
            entities.append(Entity(schema.name, members: members))
        }
        return entities
    }

    /// With no inverse declared on either side: the one relationship of `target` that reaches
    /// back to `schema`'s class.
    private func soleInverse(of name: String, in schema: EntitySchema, target: EntitySchema) throws -> String {
        let candidates = target.relationships(reaching: schema.objectClass)
        guard candidates.count == 1 else {
            throw StrataError.invalidModel(entity: schema.name, property: name,
                                           reason: candidates.isEmpty
                                               ? "\(target.name) has no relationship back to \(schema.name) "
                                                   + "to be its inverse"
                                               : "\(target.name) has \(candidates.count) relationships back to "
                                                   + "\(schema.name): name the inverse with `inverse:`")
        }
        return candidates[0].name
    }
}
