import StrataRecords

/// Writes a context's unsaved changes into a record transaction: for a save, and for a fetch
/// that includes pending changes (in a transaction that is then rolled back). Inserted objects
/// get primary keys here; to-ones that name an object inserted later in the same pass are set
/// once it has one.
struct ChangeWriter {
    let context: ModelContext
    let tx: RecordTransaction
    /// The primary keys of the objects inserted by this writer, by their raw identifiers as
    /// they were (temporary or reserved), and the same pairs in the order written.
    private(set) var written = KeyTable<Int64>()
    private(set) var writtenOrder: [(raw: Int64, pk: Int64)] = []
    /// The prepared writes of the pass, by entity and slots written: inserts write every stored
    /// slot (``EntityBinding/lockedSlots``), updates the slots they changed (a save changes one
    /// or a few sets: the same properties of many objects). The last one used answers first,
    /// without hashing its slot array.
    private var writes: [WriteShape: PreparedWrite] = [:]
    private var lastWrite: (entity: Int, slots: [Int], write: PreparedWrite)?
    private struct WriteShape: Hashable {
        let entity: Int
        let slots: [Int]
    }

    init(context: ModelContext, tx: RecordTransaction) {
        self.context = context
        self.tx = tx
    }

    /// Temporary raw identifiers of the objects inserted by this writer, to their primary keys.
    var primaryKeys: [Int64: Int64] { Dictionary(writtenOrder.map { ($0.raw, $0.pk) }, uniquingKeysWith: { $1 }) }

    /// The primary key of `raw` (a primary key, or a temporary identifier saved before or
    /// inserted by this writer), or nil for an object without a primary key yet.
    func recordKey(_ raw: Int64) -> Int64? {
        let r = raw < 0 ? (written[raw] ?? context.permanentIDs[raw] ?? raw) : raw
        return r > 0 ? r : nil
    }

    /// The record identifier of `raw` (see ``recordKey(_:)``).
    func recordID(_ raw: Int64, _ b: EntityBinding) -> ObjectID? {
        recordKey(raw).map { ObjectID(entity: b.name, primaryKey: UInt64($0)) }
    }

    /// The value to write for `slot` of `o`: a to-one as the target's primary key.
    func storedValue(_ o: ManagedObject, _ b: EntityBinding, _ slot: Int) -> StoredValue {
        let v = o._values[slot]
        guard b.schema.slotKinds[slot] == .toOne else { return v }
        guard case .int(let raw) = v, let pk = recordKey(raw) else { return .null }
        return .int(pk)
    }

    /// The prepared write of `slots` of `b`'s entity, made on first use in the pass.
    private mutating func preparedWrite(_ b: EntityBinding, slots: [Int]) throws -> PreparedWrite {
        if let last = lastWrite, last.entity == b.index, last.slots == slots { return last.write }
        let shape = WriteShape(entity: b.index, slots: slots)
        let w: PreparedWrite
        if let known = writes[shape] {
            w = known
        } else {
            w = try context.container.store.prepareWrite(b.name, properties: slots.map { b.schema.properties[$0].name })
            writes[shape] = w
        }
        lastWrite = (b.index, slots, w)
        return w
    }

    /// The stored slots of `o` that differ from its snapshot (every one without a snapshot).
    func changedSlots(_ o: ManagedObject, _ b: EntityBinding) -> [Int] {
        let values = o._values
        guard !values.isEmpty else { return [] }   // a fault changed nothing of its row
        let snapshot = o._snapshot
        if snapshot.isEmpty { return b.lockedSlots }
        let locked = b.lockedSlots
        guard let last = locked.last, last < values.count, last < snapshot.count else {
            return locked.filter { !values[$0].isIdentical(to: snapshot[$0]) }
        }
        // Slots in range (they ascend): compared in place, from their bits first.
        return values.withUnsafeBufferPointer { vp in
            snapshot.withUnsafeBufferPointer { sp in locked.filter { !StoredValue.identical(vp, $0, sp, $0) } }
        }
    }

    /// Inserts `objects` in order.
    mutating func insert(_ objects: [ManagedObject]) throws {
        if written.count == 0 { written = KeyTable(capacity: objects.count) }
        writtenOrder.reserveCapacity(writtenOrder.count + objects.count)
        var deferred: [(ManagedObject, EntityBinding, Int)] = []
        // Objects with reserved primary keys not written yet (by entity and key): a to-one
        // naming one of them waits. One with a temporary identifier needs no entry: until it
        // is written, ``recordKey(_:)`` has no key for it (temporary identifiers are never
        // reused, so none of them is among those saved before).
        var unwritten = Set<ModelContext.Key>()
        for o in objects where o._rawID > 0 {
            if let b = context.binding(o) { unwritten.insert(ModelContext.Key(entity: b.index, raw: o._rawID)) }
        }
        for o in objects {
            guard let b = context.binding(o) else { continue }
            // Every stored slot, in the prepared order: a to-one whose target is not written
            // yet is nil for now (as a slot left out would be) and set once it is.
            let write = try preparedWrite(b, slots: b.lockedSlots)
            let kinds = b.schema.slotKinds
            let current = o._values
            var values: [StoredValue] = []
            values.reserveCapacity(b.lockedSlots.count)
            for slot in b.lockedSlots {
                // An object never given values (none, or all) inserts its defaults.
                guard slot < current.count else { values.append(b.schema.initialValues[slot]); continue }
                let v = current[slot]
                guard kinds[slot] == .toOne else { values.append(v); continue }
                guard case .int(let raw) = v else { values.append(.null); continue }
                if let pk = recordKey(raw),
                   unwritten.isEmpty || !unwritten.contains(ModelContext.Key(entity: context.container.bindings[b.targetEntity[slot]].index, raw: raw)) {
                    values.append(.int(pk))
                } else {
                    deferred.append((o, b, slot))
                    values.append(.null)
                }
            }
            let raw = o._rawID
            let key = try tx.insertRow(write, primaryKey: raw > 0 ? UInt64(raw) : nil, values)
            let pk = try Self.identity(key, of: b.name)
            written[raw] = pk
            writtenOrder.append((raw, pk))
            if raw > 0 { unwritten.remove(ModelContext.Key(entity: b.index, raw: raw)) }
        }
        for (o, b, slot) in deferred { try update(o, b, slots: [slot]) }
    }

    /// The object identity of a primary key the store handed out. Keys count up from 1, so one
    /// above `Int64.max` (where identities live) only comes from a forged key counter.
    static func identity(_ pk: UInt64, of entity: String) throws -> Int64 {
        guard let raw = Int64(exactly: pk) else {
            throw StrataError.corrupt("the primary-key counter of \(entity) handed out \(pk), above \(Int64.max), the largest key of an object", offset: nil)
        }
        return raw
    }

    /// Writes `slots` of the stored object `o`.
    mutating func update(_ o: ManagedObject, _ b: EntityBinding, slots: [Int]) throws {
        guard !slots.isEmpty, let pk = recordKey(o._rawID) else { return }
        let write = try preparedWrite(b, slots: slots)
        var values: [StoredValue] = []
        values.reserveCapacity(slots.count)
        for slot in slots { values.append(storedValue(o, b, slot)) }
        try tx.update(primaryKey: UInt64(pk), write, values)
    }

    /// Makes and breaks the many-to-many links, each once.
    func writeLinks(_ links: [ModelContext.LinkChange]) throws {
        for l in links where l.isPrimary {
            guard let b = context.binding(l.owner), let rel = b.relationships[l.slot], rel.isManyToMany,
                  let owner = recordID(l.owner._rawID, b), let mb = context.binding(l.member),
                  let member = recordID(l.member._rawID, mb) else { continue }
            if l.added { try tx.add(member, to: rel.name, of: owner) } else { try tx.remove(member, from: rel.name, of: owner) }
        }
    }

    /// Deletes the objects that still exist (another save may have deleted them already).
    func delete(_ objects: [ManagedObject]) throws {
        for o in objects {
            guard let b = context.binding(o), let id = recordID(o._rawID, b), try tx.exists(id) else { continue }
            try tx.delete(id)
        }
    }
}
