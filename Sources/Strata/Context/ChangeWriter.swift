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
    /// The changed slots ``changedSlots(_:_:)`` answered last, as a mask and a list.
    private var lastChanged: (mask: UInt64, slots: [Int]) = (0, [])
    /// The values an update writes, reused (see ``update(_:_:slots:)``).
    private var updateValues: [StoredValue] = []
    private struct WriteShape: Hashable {
        let entity: Int
        let slots: [Int]
    }

    init(context: ModelContext, tx: RecordTransaction) {
        self.context = context
        self.tx = tx
    }

    /// Temporary raw identifiers of the objects inserted by this writer, to their primary keys.
    var primaryKeys: [Int64: Int64] {
        Dictionary(writtenOrder.map { ($0.raw, $0.pk) }, uniquingKeysWith: { $1 })
    }

    /// The primary key of `raw` (a primary key, or a temporary identifier saved before or
    /// inserted by this writer), or nil for an object without a primary key yet.
    func recordKey(_ raw: Int64) -> Int64? {
        let key = raw < 0 ? (written[raw] ?? context.permanentIDs[raw] ?? raw) : raw
        return key > 0 ? key : nil
    }

    /// The record identifier of `raw` (see ``recordKey(_:)``).
    func recordID(_ raw: Int64, _ binding: EntityBinding) -> ObjectID? {
        recordKey(raw).map { ObjectID(entity: binding.name, primaryKey: UInt64($0)) }
    }

    /// The value to write for `slot` of `object`: a to-one as the target's primary key.
    func storedValue(_ object: ManagedObject, _ binding: EntityBinding, _ slot: Int) -> StoredValue {
        let value = object._values[slot]
        guard binding.schema.slotKinds[slot] == .toOne else { return value }
        guard case .int(let raw) = value, let pk = recordKey(raw) else { return .null }
        return .int(pk)
    }

    /// The prepared write of `slots` of `binding`'s entity, made on first use in the pass.
    private mutating func preparedWrite(_ binding: EntityBinding, slots: [Int]) throws -> PreparedWrite {
        if let last = lastWrite, last.entity == binding.index, last.slots == slots { return last.write }
        let shape = WriteShape(entity: binding.index, slots: slots)
        let write: PreparedWrite
        if let known = writes[shape] {
            write = known
        } else {
            let properties = slots.map { binding.schema.properties[$0].name }
            write = try context.container.store.prepareWrite(binding.name, properties: properties)
            writes[shape] = write
        }
        lastWrite = (binding.index, slots, write)
        return write
    }

    /// The stored slots of `object` that differ from its snapshot (every one without a snapshot).
    mutating func changedSlots(_ object: ManagedObject, _ binding: EntityBinding) -> [Int] {
        let values = object._values
        guard !values.isEmpty else { return [] }   // a fault changed nothing of its row
        let snapshot = object._snapshot
        if snapshot.isEmpty { return binding.lockedSlots }
        let locked = binding.lockedSlots
        guard let last = locked.last, last < values.count, last < snapshot.count, last < 64 else {
            return locked.filter { !values[$0].isIdentical(to: snapshot[$0]) }
        }
        // Slots in range (they ascend): compared in place, from their bits first, into a mask;
        // objects that changed the same slots as the one before (most of a save's) share its
        // list, so no array is made per object.
        let mask = values.withUnsafeBufferPointer { valueBuffer in
            snapshot.withUnsafeBufferPointer { snapshotBuffer in
                var mask: UInt64 = 0
                for slot in locked where !StoredValue.identical(valueBuffer, slot, snapshotBuffer, slot) {
                    mask |= 1 << UInt64(slot)
                }
                return mask
            }
        }
        if mask == lastChanged.mask { return lastChanged.slots }
        var slots: [Int] = []
        var rest = mask
        while rest != 0 {
            slots.append(rest.trailingZeroBitCount)
            rest &= rest - 1
        }
        lastChanged = (mask, slots)
        return slots
    }

    /// Inserts `objects` in order.
    mutating func insert(_ objects: [ManagedObject]) throws {
        written.reserveCapacity(written.count + objects.count)
        writtenOrder.reserveCapacity(writtenOrder.count + objects.count)
        var deferred: [(ManagedObject, EntityBinding, Int)] = []
        // Objects with reserved primary keys not written yet (by entity and key): a to-one
        // naming one of them waits. One with a temporary identifier needs no entry: until it
        // is written, ``recordKey(_:)`` has no key for it (temporary identifiers are never
        // reused, so none of them is among those saved before).
        var unwritten = Set<ModelContext.Key>()
        for object in objects where object._rawID > 0 {
            if let binding = context.binding(object) {
                unwritten.insert(ModelContext.Key(entity: binding.index, raw: object._rawID))
            }
        }
        for object in objects {
            guard let binding = context.binding(object) else { continue }
            // Every stored slot, in the prepared order: a to-one whose target is not written
            // yet is nil for now (as a slot left out would be) and set once it is.
            let write = try preparedWrite(binding, slots: binding.lockedSlots)
            let kinds = binding.schema.slotKinds
            let current = object._values
            let values: [StoredValue]
            if binding.lockedSlotsAreAll, current.count == kinds.count,
               writesAsIs(current, kinds, binding, unwritten: unwritten) {
                // The object's own array, shared (no copy): the committed row the save reports
                // is then the object's values, which its snapshot adopts in place.
                values = current
            } else {
                values = rowValues(object, current, kinds, binding, unwritten: unwritten, deferred: &deferred)
            }
            let raw = object._rawID
            let key = try tx.insertRow(write, primaryKey: raw > 0 ? UInt64(raw) : nil, values)
            let pk = try Self.identity(key, of: binding.name)
            // Each object once: absent unless two entities' objects reserved the same key, whose
            // later pair replaces the earlier, as a subscript would.
            written.insert(pk, underAbsent: raw)
            writtenOrder.append((raw, pk))
            if raw > 0 { unwritten.remove(ModelContext.Key(entity: binding.index, raw: raw)) }
        }
        for (object, binding, slot) in deferred { try update(object, binding, slots: [slot]) }
    }

    /// Whether `current` can be written as it is: each to-one is nil or names a row already
    /// written under the same key (a temporary identifier needs its primary key instead, and
    /// a target reserved but not written yet waits).
    private func writesAsIs(_ current: [StoredValue], _ kinds: [EntitySchema.SlotKind], _ binding: EntityBinding,
                            unwritten: Set<ModelContext.Key>) -> Bool {
        for slot in kinds.indices where kinds[slot] == .toOne {
            switch current[slot] {
            case .null: continue
            case .int(let raw) where raw > 0:
                if waitsForTarget(raw, slot: slot, binding, unwritten: unwritten) { return false }
            default: return false
            }
        }
        return true
    }

    /// Whether the to-one in `slot` names a target whose primary key is reserved but whose row
    /// is not written yet (the value then waits for it).
    private func waitsForTarget(_ raw: Int64, slot: Int, _ binding: EntityBinding,
                                unwritten: Set<ModelContext.Key>) -> Bool {
        if unwritten.isEmpty { return false }
        let target = context.container.bindings[binding.targetEntity[slot]].index
        return unwritten.contains(ModelContext.Key(entity: target, raw: raw))
    }

    /// Every stored slot of `object` in the prepared order: a to-one whose target is not
    /// written yet is nil for now (as a slot left out would be), and goes to `deferred` to be
    /// set once it is.
    private func rowValues(_ object: ManagedObject, _ current: [StoredValue], _ kinds: [EntitySchema.SlotKind],
                           _ binding: EntityBinding, unwritten: Set<ModelContext.Key>,
                           deferred: inout [(ManagedObject, EntityBinding, Int)]) -> [StoredValue] {
        var values: [StoredValue] = []
        values.reserveCapacity(binding.lockedSlots.count)
        for slot in binding.lockedSlots {
            // An object never given values (none, or all) inserts its defaults.
            guard slot < current.count else { values.append(binding.schema.initialValues[slot]); continue }
            let value = current[slot]
            guard kinds[slot] == .toOne else { values.append(value); continue }
            guard case .int(let raw) = value else { values.append(.null); continue }
            if let pk = recordKey(raw), !waitsForTarget(raw, slot: slot, binding, unwritten: unwritten) {
                values.append(.int(pk))
            } else {
                deferred.append((object, binding, slot))
                values.append(.null)
            }
        }
        return values
    }

    /// The object identity of a primary key the store handed out. Keys count up from 1, so one
    /// above `Int64.max` (where identities live) only comes from a forged key counter.
    static func identity(_ pk: UInt64, of entity: String) throws -> Int64 {
        guard let raw = Int64(exactly: pk) else {
            throw StrataError.corrupt("the primary-key counter of \(entity) handed out \(pk), above \(Int64.max), "
                                      + "the largest key of an object", offset: nil)
        }
        return raw
    }

    /// Writes `slots` of the stored object `object`.
    mutating func update(_ object: ManagedObject, _ binding: EntityBinding, slots: [Int]) throws {
        guard !slots.isEmpty, let pk = recordKey(object._rawID) else { return }
        let write = try preparedWrite(binding, slots: slots)
        // One buffer for every update of the pass: the record layer reads the values and
        // keeps none of them, so the buffer stays this writer's own and is never reallocated.
        updateValues.removeAll(keepingCapacity: true)
        for slot in slots { updateValues.append(storedValue(object, binding, slot)) }
        try tx.update(primaryKey: UInt64(pk), write, updateValues)
    }

    /// Makes and breaks the many-to-many links, each once.
    func writeLinks(_ links: [ModelContext.LinkChange]) throws {
        for link in links where link.isPrimary {
            guard let binding = context.binding(link.owner), let rel = binding.relationships[link.slot],
                  rel.isManyToMany,
                  let owner = recordID(link.owner._rawID, binding), let memberBinding = context.binding(link.member),
                  let member = recordID(link.member._rawID, memberBinding) else { continue }
            if link.added {
                try tx.add(member, to: rel.name, of: owner)
            } else {
                try tx.remove(member, from: rel.name, of: owner)
            }
        }
    }

    /// Deletes the objects that still exist (another save may have deleted them already).
    func delete(_ objects: [ManagedObject]) throws {
        for object in objects {
            guard let binding = context.binding(object), let id = recordID(object._rawID, binding),
                  try tx.exists(id) else { continue }
            try tx.delete(id)
        }
    }
}
