import Foundation
import StrataStorage

/// One write transaction of the record layer: inserts, updates, relationship changes and
/// deletes, applied to the storage transaction as they are made; delete rules, derived
/// attributes, uniqueness and validation are settled at commit, in the same transaction.
public final class RecordTransaction: RecordReader {
    let tx: WriteTransaction
    /// Every row this transaction read or wrote: one dictionary, so a row costs one lookup.
    var rowStates: [RowKey: RowState] = [:]
    /// Rows written, per entity, in the order of their first write (the change set).
    var writtenKeys: [[RowKey]]
    /// Rows whose new state is not in the rows tree yet: each is encoded once, at commit (or
    /// before a scan of the rows tree), however often derivation changes it.
    var dirtyKeys: [RowKey] = []
    /// Rows whose own stored attributes or to-one relationships a caller changed (`now()`).
    var explicitlyChanged = Set<RowKey>()
    /// Deleted rows whose delete rules have not run yet.
    var pendingDeletes: [RowKey] = []
    /// Many-to-many links made or broken: (entity, relationship, row, other row, added).
    var linkChanges: [LinkChange] = []
    var nextPrimaryKeys: [Int: UInt64] = [:]
    /// The storage trees rows and their entries are written to, looked up once each.
    lazy var trees = WriteTrees(tx: tx, model: model)
    var rowsRead = 0
    var rowsWritten = 0

    struct LinkChange {
        var entity: Int
        var relationship: String
        var row: UInt64
        var other: UInt64
        var added: Bool
    }

    /// A row as the transaction knows it.
    struct RowState {
        /// As it was when the transaction began (`nil`: it did not exist).
        var original: [Value]?
        /// As it is now (`nil`: deleted, or never existed).
        var current: [Value]?
        /// Changed by this transaction (else only read).
        var written = false
        /// Changed since it was last put into its rows tree.
        var dirty = false
    }

    init(model: Model, tx: WriteTransaction) {
        self.tx = tx
        self.writtenKeys = Array(repeating: [], count: model.entities.count)
        super.init(model: model, source: .write(tx))
    }

    /// The row as it was when the transaction began, or `nil` when this transaction has not
    /// changed it (`.some(nil)`: inserted here).
    func original(_ key: RowKey) -> [Value]?? {
        guard let s = rowStates[key], s.written else { return nil }
        return .some(s.original)
    }

    /// The rows of `entity` this transaction changed (inserted, updated or deleted).
    func touched(_ entity: Int) -> [RowKey] { writtenKeys[entity] }

    override func row(_ key: RowKey) throws -> [Value]? {
        if let s = rowStates[key] { return s.current }
        rowsRead += 1
        let r = try super.row(key)
        rowStates[key] = RowState(original: r, current: r)
        return r
    }

    override func row(_ key: RowKey, stored: UnsafeRawBufferPointer) throws -> [Value]? {
        if let s = rowStates[key] { return s.current }
        return try super.row(key, stored: stored)
    }

    override func willScanRows() throws { try flushRows() }

    /// Puts every changed row into its rows tree.
    func flushRows() throws {
        for key in dirtyKeys {
            guard let state = rowStates[key], state.dirty else { continue }
            rowStates[key]!.dirty = false
            let e = model.entities[key.entity]
            let rows = try trees.rows(e)
            let pk = KeyEncoding.primaryKey(key.pk)
            if let new = state.current { try rows.put(pk, RowCodec.encode(new, fields: e.fields)) } else { _ = try rows.delete(pk) }
        }
        dirtyKeys.removeAll(keepingCapacity: true)
    }

    // MARK: Public mutations

    /// Inserts an object. `values` holds attributes (any ``ValueConvertible``) and to-one
    /// relationships (an ``ObjectID``); unnamed attributes take their defaults. Derived
    /// attributes get their values at commit.
    @discardableResult
    public func insert(_ entity: String, _ values: [String: any ValueConvertible] = [:]) throws -> ObjectID {
        let e = try self.entity(entity)
        let pk = try allocatePrimaryKey(e)
        var r = e.fields.map { $0.defaultValue ?? .null }
        for d in e.derivedAttributes {
            // An empty relationship counts and sums to zero from the start.
            if case .aggregate(let f, _, _) = d.parsed, f == .count || f == .sum {
                r[d.field] = d.type == .decimal ? .decimal(0) : (d.type == .double ? .double(0) : .int(0))
            }
        }
        try assign(values, to: &r, entity: e)
        let key = RowKey(entity: e.index, pk: pk)
        // A fresh primary key names no stored row (keys are never reused): nothing to read.
        rowStates[key] = RowState(original: nil, current: nil)
        try write(key, r)
        explicitlyChanged.insert(key)
        return ObjectID(entity: e.name, primaryKey: pk)
    }

    /// Changes attributes and to-one relationships of an existing object.
    public func update(_ id: ObjectID, _ values: [String: any ValueConvertible]) throws {
        let key = try rowKey(id)
        let e = model.entities[key.entity]
        guard var r = try row(key) else { throw StrataError.objectNotFound(entity: e.name, primaryKey: id.primaryKey) }
        try assign(values, to: &r, entity: e)
        try write(key, r)
        explicitlyChanged.insert(key)
    }

    /// Sets a to-one relationship (`nil` clears it); the inverse to-many follows.
    public func set(_ relationship: String, of id: ObjectID, to target: ObjectID?) throws {
        try update(id, [relationship: target.map { $0 as any ValueConvertible } ?? Value.null])
    }

    /// Adds `member` to a to-many relationship of `id` (for a to-many whose inverse is to-one,
    /// this sets the member's to-one; for many-to-many it links both ways).
    public func add(_ member: ObjectID, to relationship: String, of id: ObjectID) throws {
        let (rel, key, other) = try toMany(relationship, id, member)
        if rel.inverseField != nil {
            try set(rel.inverse, of: member, to: id)
            return
        }
        try link(rel, key, other, add: true)
    }

    /// Removes `member` from a to-many relationship of `id`.
    public func remove(_ member: ObjectID, from relationship: String, of id: ObjectID) throws {
        let (rel, key, other) = try toMany(relationship, id, member)
        if rel.inverseField != nil {
            if try target(of: rel.inverse, of: member) == id { try set(rel.inverse, of: member, to: nil) }
            return
        }
        try link(rel, key, other, add: false)
    }

    /// Deletes an object. Its delete rules (cascade, nullify, deny) run at commit, so objects
    /// deleted later in the same transaction do not count against a `deny`.
    public func delete(_ id: ObjectID) throws {
        let key = try rowKey(id)
        guard try row(key) != nil else { throw StrataError.objectNotFound(entity: id.entity, primaryKey: id.primaryKey) }
        try write(key, nil)
        pendingDeletes.append(key)
    }

    // MARK: Internals

    private func toMany(_ relationship: String, _ id: ObjectID, _ member: ObjectID) throws -> (RelationshipDescription, RowKey, RowKey) {
        let key = try rowKey(id)
        let e = model.entities[key.entity]
        guard let rel = e.relationship(relationship), rel.isToMany else {
            throw StrataError.invalidArgument("'\(relationship)' is not a to-many relationship of \(e.name)")
        }
        guard member.entity == rel.target else {
            throw StrataError.invalidArgument("\(e.name).\(relationship) holds \(rel.target) objects, not \(member.entity)")
        }
        guard try row(key) != nil else { throw StrataError.objectNotFound(entity: e.name, primaryKey: id.primaryKey) }
        let other = try rowKey(member)
        guard try row(other) != nil else { throw StrataError.objectNotFound(entity: member.entity, primaryKey: member.primaryKey) }
        return (rel, key, other)
    }

    /// Links or unlinks two rows through a many-to-many relationship (both join trees).
    func link(_ rel: RelationshipDescription, _ key: RowKey, _ other: RowKey, add: Bool) throws {
        let e = model.entities[key.entity]
        let t = model.entities[other.entity]
        let here = try tx.tree(RecordTrees.join(e, rel.name), createIfMissing: true)!
        let there = try tx.tree(RecordTrees.join(t, rel.inverse), createIfMissing: true)!
        let k1 = RecordTrees.pair(key.pk, other.pk)
        let k2 = RecordTrees.pair(other.pk, key.pk)
        if add {
            guard try here.get(k1) == nil else { return }
            try here.put(k1, [])
            try there.put(k2, [])
        } else {
            guard try here.delete(k1) else { return }
            _ = try there.delete(k2)
        }
        linkChanges.append(LinkChange(entity: key.entity, relationship: rel.name, row: key.pk, other: other.pk, added: add))
        linkChanges.append(LinkChange(entity: other.entity, relationship: rel.inverse, row: other.pk, other: key.pk, added: add))
    }

    func allocatePrimaryKey(_ e: EntityDescription) throws -> UInt64 {
        if let next = nextPrimaryKeys[e.index] {
            nextPrimaryKeys[e.index] = next + 1
            return next
        }
        let stored = try tx.tree(RecordTrees.meta)?.get(RecordTrees.nextKey(e)).map { KeyEncoding.decodePrimaryKey($0) } ?? 1
        nextPrimaryKeys[e.index] = stored + 1
        return stored
    }

    /// Applies caller-supplied values to a row, converting and checking each.
    func assign(_ values: [String: any ValueConvertible], to r: inout [Value], entity e: EntityDescription) throws {
        for (name, given) in values {
            guard let i = e.fieldIndex[name], e.fields[i].kind != .auxiliary else {
                if e.isTransient(name) {
                    throw StrataError.validation(entity: e.name, property: name, reason: "transient attributes are not stored; keep them in the object layer")
                }
                if e.relationship(name)?.isToMany == true {
                    throw StrataError.validation(entity: e.name, property: name, reason: "a to-many relationship is changed with add(_:to:of:) and remove(_:from:of:)")
                }
                throw StrataError.validation(entity: e.name, property: name, reason: "no such property")
            }
            switch e.fields[i].kind {
            case .derived:
                throw StrataError.validation(entity: e.name, property: name, reason: "a derived attribute is computed by the store and cannot be set")
            case .toOne(let t):
                if let id = given as? ObjectID {
                    guard id.entity == model.entities[t].name else {
                        throw StrataError.validation(entity: e.name, property: name, reason: "expects a \(model.entities[t].name), got \(id.entity)")
                    }
                    guard try row(RowKey(entity: t, pk: id.primaryKey)) != nil else {
                        throw StrataError.objectNotFound(entity: id.entity, primaryKey: id.primaryKey)
                    }
                    r[i] = id.strataValue
                } else if given.strataValue.isNull {
                    r[i] = .null
                } else {
                    throw StrataError.validation(entity: e.name, property: name, reason: "a to-one relationship takes an ObjectID or nil")
                }
            case .attribute:
                let v = given.strataValue
                if v.isNull {
                    r[i] = .null
                } else {
                    let type = e.fields[i].type
                    guard let c = type.coerce(v) else {
                        throw StrataError.validation(entity: e.name, property: name, reason: "\(v) is not a \(type.rawValue)")
                    }
                    r[i] = c
                }
            case .auxiliary:
                break
            }
        }
    }

    /// Records a row's new state (or its deletion) and updates its fetch indexes and the inverse
    /// indexes of its to-one relationships; the row itself reaches its tree at commit
    /// (``flushRows()``). Uniqueness is settled at commit.
    func write(_ key: RowKey, _ new: [Value]?) throws {
        var state: RowState
        if let known = rowStates[key] {
            state = known
        } else {
            rowsRead += 1
            let stored = try super.row(key)
            state = RowState(original: stored, current: stored)
        }
        let old = state.current
        state.current = new
        if !state.written {
            state.written = true
            writtenKeys[key.entity].append(key)
        }
        if !state.dirty {
            state.dirty = true
            dirtyKeys.append(key)
            rowsWritten += 1
        }
        rowStates[key] = state
        try updateIndexes(model.entities[key.entity], key.pk, old, new)
    }

    /// Sets fields of an existing row, as derivation does: in place when none of them has
    /// index or inverse entries to move (no copy of the row, no key encoded), else through
    /// ``write(_:_:)``. A row that does not exist is left alone.
    func setFields(_ key: RowKey, _ changes: [(field: Int, value: Value)]) throws {
        let e = model.entities[key.entity]
        guard !changes.contains(where: { e.fieldHasEntries[$0.field] }), rowStates[key]?.current != nil else {
            guard var r = try row(key) else { return }
            for c in changes { r[c.field] = c.value }
            try write(key, r)
            return
        }
        // One in-place access to the state: the row's array is copied at most once per
        // transaction (when it still shares storage with the row's original).
        func change(_ s: inout RowState) -> (newlyWritten: Bool, newlyDirty: Bool) {
            s.current!.withUnsafeMutableBufferPointer { r in
                for c in changes { r[c.field] = c.value }
            }
            defer { s.written = true; s.dirty = true }
            return (!s.written, !s.dirty)
        }
        let (newlyWritten, newlyDirty) = change(&rowStates[key]!)
        if newlyWritten { writtenKeys[key.entity].append(key) }
        if newlyDirty {
            dirtyKeys.append(key)
            rowsWritten += 1
        }
    }

    /// Moves the row's fetch-index and inverse entries from its old values to its new ones;
    /// an index whose values did not change is not touched (nor its keys encoded).
    private func updateIndexes(_ e: EntityDescription, _ pk: UInt64, _ old: [Value]?, _ new: [Value]?) throws {
        for (i, fields) in e.indexFields.enumerated() {
            if let old, let new, fields.allSatisfy({ old[$0].isIdentical(to: new[$0]) }) { continue }
            let ok = old.map { o in KeyEncoding.indexKey(fields.map { o[$0] }, pk: pk) }
            let nk = new.map { n in KeyEncoding.indexKey(fields.map { n[$0] }, pk: pk) }
            if ok == nk { continue }
            let t = try trees.index(e, i)
            if let ok { _ = try t.delete(ok) }
            if let nk { try t.put(nk, []) }
        }
        for (f, _) in e.toOneFields {
            let ot = old?[f], nt = new?[f]
            if ot == nt { continue }
            let t = try trees.inverse(e, f)
            if case .int(let p)? = ot { _ = try t.delete(RecordTrees.pair(UInt64(bitPattern: p), pk)) }
            if case .int(let p)? = nt { try t.put(RecordTrees.pair(UInt64(bitPattern: p), pk), []) }
        }
    }
}
