import StrataRecords

/// Writes a context's unsaved changes into a record transaction: for a save, and for a fetch
/// that includes pending changes (in a transaction that is then rolled back). Inserted objects
/// get primary keys here; to-ones that name an object inserted later in the same pass are set
/// once it has one.
struct ChangeWriter {
    let context: ModelContext
    let tx: RecordTransaction
    /// Temporary raw identifiers of the objects inserted by this writer, to their primary keys.
    private(set) var primaryKeys: [Int64: Int64] = [:]
    /// The prepared writes of the pass, by entity and slots written: inserts write every stored
    /// slot (``EntityBinding/lockedSlots``), updates the slots they changed (a save changes one
    /// or a few sets: the same properties of many objects).
    private var writes: [WriteShape: PreparedWrite] = [:]
    private struct WriteShape: Hashable {
        let entity: Int
        let slots: [Int]
    }

    init(context: ModelContext, tx: RecordTransaction) {
        self.context = context
        self.tx = tx
    }

    /// The record identifier of `raw` (a primary key, or a temporary identifier saved before or
    /// inserted by this writer), or nil for an object without a primary key yet.
    func recordID(_ raw: Int64, _ b: EntityBinding) -> ObjectID? {
        let r = raw < 0 ? (primaryKeys[raw] ?? context.permanentIDs[raw] ?? raw) : raw
        return r > 0 ? ObjectID(entity: b.name, primaryKey: UInt64(r)) : nil
    }

    /// The value to write for `slot` of `o`: a to-one as the target's primary key.
    func storedValue(_ o: ManagedObject, _ b: EntityBinding, _ slot: Int) -> Value {
        let v = o._values[slot]
        guard case .toOne = b.schema.properties[slot].kind else { return v }
        guard case .int(let raw) = v else { return .null }
        return recordID(raw, context.container.bindings[b.targetEntity[slot]])?.strataValue ?? .null
    }

    /// The prepared write of `slots` of `b`'s entity, made on first use in the pass.
    private mutating func preparedWrite(_ b: EntityBinding, slots: [Int]) throws -> PreparedWrite {
        let shape = WriteShape(entity: b.index, slots: slots)
        if let w = writes[shape] { return w }
        let w = try context.container.store.prepareWrite(b.name, properties: slots.map { b.schema.properties[$0].name })
        writes[shape] = w
        return w
    }

    /// The stored slots of `o` that differ from its snapshot (every one without a snapshot).
    func changedSlots(_ o: ManagedObject, _ b: EntityBinding) -> [Int] {
        guard !o._values.isEmpty else { return [] }   // a fault changed nothing of its row
        return b.lockedSlots.filter { o._snapshot.isEmpty || !o._values[$0].isIdentical(to: o._snapshot[$0]) }
    }

    /// Inserts `objects` in order.
    mutating func insert(_ objects: [ManagedObject]) throws {
        var deferred: [(ManagedObject, EntityBinding, Int)] = []
        // Objects not written yet (by entity and identity): a to-one naming one of them waits,
        // whether it has a temporary identifier or a reserved primary key.
        var unwritten = Set(objects.compactMap { o in context.binding(o).map { ModelContext.Key(entity: $0.index, raw: o._rawID) } })
        for o in objects {
            guard let b = context.binding(o) else { continue }
            // Every stored slot, in the prepared order: a to-one whose target is not written
            // yet is nil for now (as a slot left out would be) and set once it is.
            let write = try preparedWrite(b, slots: b.lockedSlots)
            var values: [Value] = []
            values.reserveCapacity(b.lockedSlots.count)
            for slot in b.lockedSlots {
                // An object never given values (none, or all) inserts its defaults.
                guard slot < o._values.count else { values.append(b.schema.initialValues[slot]); continue }
                if case .toOne = b.schema.properties[slot].kind, case .int(let raw) = o._values[slot] {
                    let tb = context.container.bindings[b.targetEntity[slot]]
                    if recordID(raw, tb) == nil || unwritten.contains(ModelContext.Key(entity: tb.index, raw: raw)) {
                        deferred.append((o, b, slot))
                        values.append(.null)
                        continue
                    }
                }
                values.append(storedValue(o, b, slot))
            }
            let id = o._rawID > 0 ? try tx.insert(write, primaryKey: UInt64(o._rawID), values) : try tx.insert(write, values)
            primaryKeys[o._rawID] = try Self.identity(id.primaryKey, of: b.name)
            unwritten.remove(ModelContext.Key(entity: b.index, raw: o._rawID))
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
        guard !slots.isEmpty, let id = recordID(o._rawID, b) else { return }
        try tx.update(id, try preparedWrite(b, slots: slots), slots.map { storedValue(o, b, $0) })
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
