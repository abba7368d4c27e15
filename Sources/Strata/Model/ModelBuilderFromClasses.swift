import StrataRecords
import StrataStorage

/// Builds the record layer's `Model` from model classes' schemas: one entity per class,
/// relationships paired with their inverses.
struct ModelBuilderFromClasses {
    let schemas: [EntitySchema]

    func build() throws -> Model {
        var byClass: [ObjectIdentifier: EntitySchema] = [:]
        for s in schemas {
            if let e = s.buildError { throw e }
            if byClass[ObjectIdentifier(s.objectClass)] != nil {
                throw StrataError.invalidModel(entity: s.name, property: nil, reason: "the class is listed twice")
            }
            byClass[ObjectIdentifier(s.objectClass)] = s
        }
        // Declared inverses, then the other sides found from them.
        var inverse: [String: String] = [:]  // "Entity.rel" -> inverse name
        for s in schemas {
            for (slot, p) in s.properties.enumerated() {
                guard let r = s.relationship(at: slot), r.inverse != nil else { continue }
                guard let target = byClass[ObjectIdentifier(r.target)] else {
                    throw StrataError.invalidModel(entity: s.name, property: p.name,
                                                   reason: "its target class \(r.target) is not in the container's classes")
                }
                guard let name = s.declaredInverse(ofSlot: slot), let ip = target.slotByName[name], target.properties[ip].isRelationship else {
                    throw StrataError.invalidModel(entity: s.name, property: p.name,
                                                   reason: "its inverse key path does not name a relationship of \(target.name)")
                }
                inverse["\(s.name).\(p.name)"] = name
                if let other = inverse["\(target.name).\(name)"], other != p.name {
                    throw StrataError.invalidModel(entity: target.name, property: name,
                                                   reason: "is declared the inverse of both \(s.name).\(p.name) and \(s.name).\(other)")
                }
                inverse["\(target.name).\(name)"] = p.name
            }
        }
        var entities: [Entity] = []
        for s in schemas {
            var members: [EntityMember] = []
            for p in s.properties {
                switch p.kind {
                case .attribute(let a):
                    members.append(EntityMember(StrataRecords.AttributeDescription(p.name, a.type, optional: a.isOptional, default: a.defaultValue,
                                                                       transient: a.isTransient, validation: a.validation,
                                                                       renamedFrom: a.renamedFrom)))
                    if a.options.contains(.unique) { members.append(EntityMember(Unique(p.name))) }
                    if a.options.contains(.indexed) { members.append(EntityMember(FetchIndex(p.name))) }
                case .derived(let d):
                    members.append(EntityMember(StrataRecords.DerivedAttributeDescription(p.name, d.type, d.expression, optional: d.isOptional,
                                                                     renamedFrom: d.renamedFrom)))
                    if d.options.contains(.unique) { members.append(EntityMember(Unique(p.name))) }
                    if d.options.contains(.indexed) { members.append(EntityMember(FetchIndex(p.name))) }
                case .toOne(let r), .toMany(let r):
                    guard let target = byClass[ObjectIdentifier(r.target)] else {
                        throw StrataError.invalidModel(entity: s.name, property: p.name,
                                                       reason: "its target class \(r.target) is not in the container's classes")
                    }
                    let inv = try inverse["\(s.name).\(p.name)"] ?? soleInverse(of: p.name, in: s, target: target)
                    if r.isToMany {
                        members.append(EntityMember(StrataRecords.RelationshipDescription(p.name, toMany: target.name, inverse: inv,
                                                                              deleteRule: r.deleteRule, renamedFrom: r.renamedFrom)))
                    } else {
                        members.append(EntityMember(StrataRecords.RelationshipDescription(p.name, toOne: target.name, inverse: inv,
                                                                              deleteRule: r.deleteRule, optional: r.isOptional,
                                                                              renamedFrom: r.renamedFrom)))
                    }
                }
            }
            for u in s.objectClass.uniquenessConstraints { members.append(EntityMember(Unique(u))) }
            for i in s.objectClass.fetchIndexes { members.append(EntityMember(FetchIndex(i))) }
            entities.append(Entity(s.name, members: members))
        }
        return try Model(entities: entities)
    }

    /// With no inverse declared on either side: the one relationship of `target` that reaches
    /// back to `schema`'s class.
    private func soleInverse(of name: String, in schema: EntitySchema, target: EntitySchema) throws -> String {
        let candidates = target.relationships(reaching: schema.objectClass)
        guard candidates.count == 1 else {
            throw StrataError.invalidModel(entity: schema.name, property: name,
                                           reason: candidates.isEmpty
                                               ? "\(target.name) has no relationship back to \(schema.name) to be its inverse"
                                               : "\(target.name) has \(candidates.count) relationships back to \(schema.name): name the inverse with `inverse:`")
        }
        return candidates[0].name
    }
}
