import StrataStorage

/// The objects of a custom migration stage's source model, as they were when the stage began:
/// what its code reads to fill in the new model (``MigrationStage/custom(from:to:migrate:)``).
///
/// Read-only and held in memory (the stage read every row before it rewrote the store), with
/// the reading calls of ``RecordReader``: objects of an entity, their values, their
/// relationships. Identifiers name the old model's entities; an object a stage carries over
/// keeps its primary key, so `ObjectID(entity: newName, primaryKey: old.primaryKey)` names it
/// in the new model.
public struct MigrationSnapshot {
    /// The model the rows are in: the stage's source.
    public let model: Model
    /// Rows by entity index, in primary-key order.
    var rows: [Int: [(UInt64, [StoredValue])]] = [:]
    /// Many-to-many members by entity and relationship: primary key → the other side's keys.
    var links: [LinkKey: [UInt64: [UInt64]]] = [:]
    /// Row positions by entity index and primary key, built on the first lookup of the entity.
    private let positions = PositionCache()

    struct LinkKey: Hashable {
        var entity: Int
        var relationship: String
    }

    init(model: Model) { self.model = model }

    /// Every object of `entity`, in primary-key order. Throws `invalidArgument` for an entity
    /// the old model does not have.
    public func objects(_ entity: String) throws -> [ObjectID] {
        let description = try self.entity(entity)
        return (rows[description.index] ?? []).map { ObjectID(entity: description.name, primaryKey: $0.0) }
    }

    /// How many objects of `entity` there were.
    public func count(_ entity: String) throws -> Int { (rows[try self.entity(entity).index] ?? []).count }

    /// Whether the object existed.
    public func exists(_ id: ObjectID) throws -> Bool { try row(id) != nil }

    /// Every stored attribute and derived attribute of the object (not relationships), or nil
    /// when it did not exist.
    public func values(of id: ObjectID) throws -> [String: StoredValue]? {
        guard let (entity, row) = try row(id) else { return nil }
        var out: [String: StoredValue] = [:]
        for (i, field) in entity.fields.enumerated() where field.kind == .attribute || field.kind == .derived {
            out[field.name] = row[i]
        }
        return out
    }

    /// One attribute or derived attribute (to-one relationships: the target's primary key).
    /// Throws `invalidArgument` for a property the entity does not store, `objectNotFound` for
    /// an object that did not exist.
    public func value(_ property: String, of id: ObjectID) throws -> StoredValue {
        let entity = try self.entity(id.entity)
        guard let field = entity.fieldIndex[property], entity.fields[field].kind != .auxiliary else {
            throw StrataError.invalidArgument("\(entity.name) has no stored property '\(property)'")
        }
        guard let (_, row) = try row(id) else {
            throw StrataError.objectNotFound(entity: entity.name, primaryKey: id.primaryKey)
        }
        return row[field]
    }

    /// The target of a to-one relationship.
    public func target(of relationship: String, of id: ObjectID) throws -> ObjectID? {
        let entity = try self.entity(id.entity)
        guard let rel = entity.relationship(relationship), let field = rel.field else {
            throw StrataError.invalidArgument("'\(relationship)' is not a to-one relationship of \(entity.name)")
        }
        guard let (_, row) = try row(id) else {
            throw StrataError.objectNotFound(entity: entity.name, primaryKey: id.primaryKey)
        }
        guard case .int(let pk) = row[field] else { return nil }
        return ObjectID(entity: rel.target, primaryKey: UInt64(bitPattern: pk))
    }

    /// The objects of a to-many relationship, in primary-key order.
    public func members(of relationship: String, of id: ObjectID) throws -> [ObjectID] {
        let entity = try self.entity(id.entity)
        guard let rel = entity.relationship(relationship), rel.isToMany else {
            throw StrataError.invalidArgument("'\(relationship)' is not a to-many relationship of \(entity.name)")
        }
        guard try row(id) != nil else { throw StrataError.objectNotFound(entity: entity.name, primaryKey: id.primaryKey) }
        let target = model.entities[rel.targetIndex]
        if let field = rel.inverseField {
            let owners = positions.inverse(of: target.index, field: field, rows: rows[target.index] ?? [])
            return (owners[id.primaryKey] ?? []).map { ObjectID(entity: target.name, primaryKey: $0) }
        }
        let members = links[LinkKey(entity: entity.index, relationship: rel.name)]?[id.primaryKey] ?? []
        return members.map { ObjectID(entity: target.name, primaryKey: $0) }
    }

    private func entity(_ name: String) throws -> EntityDescription {
        guard let entity = model.entity(name) else {
            throw StrataError.invalidArgument("the stage's source model (version \(model.version)) has no entity '\(name)'")
        }
        return entity
    }

    private func row(_ id: ObjectID) throws -> (EntityDescription, [StoredValue])? {
        let entity = try self.entity(id.entity)
        let list = rows[entity.index] ?? []
        guard let i = positions.position(of: id.primaryKey, entity: entity.index, rows: list) else { return nil }
        return (entity, list[i].1)
    }
}

/// Lookups a snapshot builds as its code asks (a class, so the snapshot's reads need no `mutating`).
private final class PositionCache {
    private var byEntity: [Int: [UInt64: Int]] = [:]
    private var inverses: [InverseKey: [UInt64: [UInt64]]] = [:]

    private struct InverseKey: Hashable {
        var entity: Int
        var field: Int
    }

    func position(of pk: UInt64, entity: Int, rows: [(UInt64, [StoredValue])]) -> Int? {
        if let built = byEntity[entity] { return built[pk] }
        var map: [UInt64: Int] = [:]
        map.reserveCapacity(rows.count)
        for (i, (key, _)) in rows.enumerated() { map[key] = i }
        byEntity[entity] = map
        return map[pk]
    }

    /// Target-row owners by the to-one `field` of entity `entity`: owner key → rows naming it.
    func inverse(of entity: Int, field: Int, rows: [(UInt64, [StoredValue])]) -> [UInt64: [UInt64]] {
        let slot = InverseKey(entity: entity, field: field)
        if let built = inverses[slot] { return built }
        var map: [UInt64: [UInt64]] = [:]
        for (pk, row) in rows {
            if case .int(let owner) = row[field] { map[UInt64(bitPattern: owner), default: []].append(pk) }
        }
        inverses[slot] = map
        return map
    }
}
