import StrataRecords

extension ModelContext {
    /// The objects `descriptor` selects, uniqued with the objects the context holds.
    ///
    /// Throws `misuse` when the container is closed or `T` is not one of its model classes,
    /// `invalidFetch` for a descriptor the store cannot answer (a key that names no stored
    /// property, a computed or transient one in a predicate or sort), and the store's read
    /// errors.
    @inlinable
    public func fetch<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        // Inlined, where `T` is known: the class parameter stays here (decision 56).
        if descriptor.refinesInMemory { return try fetchRefinedInMemory(descriptor) }
        return try fetchObjects(StoreFetch(descriptor)).cast(to: T.self)
    }

    /// The store's part of a fetch, as objects of the fetched class.
    @usableFromInline
    func fetchObjects(_ descriptor: StoreFetch) throws -> FetchedObjects {
        try container.whileOpen("fetch") { try fetchStoreObjects(descriptor) }
    }

    private func fetchStoreObjects(_ descriptor: StoreFetch) throws -> FetchedObjects {
        // Faults fulfilled one by one take the rows the fetch's scan read, if it read any
        // (batch faulting reads its own, in one read per slice). Objects returned loaded take
        // theirs at once, however many: they hold their values from here anyway.
        let loadsNow = !descriptor.returnsObjectsAsFaults || !descriptor.relationshipKeyPathsForPrefetching.isEmpty
        let keeping: RowKeeping = loadsNow ? .all : descriptor.fetchBatchSize == 0 ? .forFaults : .none
        let (binding, raws, rows) = try fetchRaws(descriptor, keeping: keeping)
        // The registry's table grows once, not by doublings on the way (each rehashed every
        // entry). Not beyond what a refetch of registered objects needs.
        registry.reserveCapacity(raws.count, entity: binding.index)
        let objects = raws.map { object(raw: $0, binding: binding) }
        if loadsNow {
            load(objects, fromScanned: rows, binding)
        } else {
            rowCache.insert(rows, raws: raws, objects: objects, entity: binding.index)
        }
        for path in descriptor.relationshipKeyPathsForPrefetching {
            guard let slot = binding.schema.slotByName[path], binding.schema.properties[slot].isRelationship else {
                throw StrataError.invalidFetch("'\(path)' is not a relationship of \(binding.name)")
            }
        }
        if loadsNow {
            // What the scan did not read (an index answered alone; unsaved changes): one read.
            fulfill(objects.filter(\.isFault), binding)
        } else if descriptor.fetchBatchSize > 0 {
            // Batch faulting: the first fault of a slice that fires loads the whole slice.
            var start = 0
            while start < objects.count {
                let slice = objects[start..<min(start + descriptor.fetchBatchSize, objects.count)].filter(\.isFault)
                start += descriptor.fetchBatchSize
                guard slice.count > 1 else { continue }
                let batch = FaultBatch(raws: slice.map(\._rawID))
                for object in slice { faultBatches[key(object, binding)] = batch }
            }
        }
        // Prefetching: the rows of every target of each relationship, read at once (one read
        // per relationship), kept for the targets' faults to take when they fire.
        for path in descriptor.relationshipKeyPathsForPrefetching {
            let slot = binding.schema.slotByName[path]!
            guard binding.targetEntity[slot] >= 0 else { continue }
            let targetBinding = container.bindings[binding.targetEntity[slot]]
            var wanted: [Int64] = []
            var seen = Set<Int64>()
            for object in objects {
                let raws: [Int64]
                if binding.schema.properties[slot].isToMany {
                    raws = memberRaws(slot: slot, of: object)
                } else if slot < object._values.count, case .int(let raw) = object._values[slot] {
                    raws = [raw]
                } else {
                    raws = []
                }
                for raw in raws where raw > 0 && seen.insert(raw).inserted
                    && (registry[Key(entity: targetBinding.index, raw: raw)]?.takeUnretainedValue().isFault ?? true) {
                    wanted.append(raw)
                }
            }
            guard !wanted.isEmpty else { continue }
            let recordReader = try reader()
            statistics.rowReads += 1
            let targetRows = try recordReader.storedRows(of: targetBinding.name, primaryKeys: wanted.map { UInt64($0) })
            for (raw, row) in zip(wanted, targetRows) {
                if let row { prefetchedRows[Key(entity: targetBinding.index, raw: raw)] = row }
            }
        }
        return FetchedObjects(objects: objects, objectClass: binding.schema.objectClass)
    }

    /// How many objects `descriptor` selects.
    ///
    /// Throws as ``fetch(_:)`` does.
    public func fetchCount<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try container.whileOpen("fetchCount") {
            if descriptor.refinesInMemory { return try fetchRefinedInMemory(descriptor).count }
            return try fetchRaws(StoreFetch(descriptor)).raws.count
        }
    }

    /// The identifiers of the objects `descriptor` selects, without making objects.
    ///
    /// Throws as ``fetch(_:)`` does.
    public func fetchIdentifiers<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws
        -> [ManagedObjectID] {
        try container.whileOpen("fetchIdentifiers") {
            if descriptor.refinesInMemory { return try fetchRefinedInMemory(descriptor).map(\.objectID) }
            let (binding, raws, _) = try fetchRaws(StoreFetch(descriptor))
            return raws.map { ManagedObjectID(entityName: binding.name, rawValue: $0) }
        }
    }

    /// Which of the rows the store's scan reads a fetch keeps.
    private enum RowKeeping {
        /// None (counts, identifiers, batch faulting).
        case none
        /// As many as ``rowCache`` has room for, for the faults returned to take.
        case forFaults
        /// Every one: the objects are loaded now.
        case all
    }

    /// With `keeping`, also the stored bytes of the rows the store's scan read, parallel to the
    /// identities (none when it read none, and always for a fetch over unsaved changes, whose
    /// rows the store does not hold).
    private func fetchRaws(_ descriptor: StoreFetch, keeping: RowKeeping = .none) throws
        -> (binding: EntityBinding, raws: [Int64], rows: FetchedRowBytes) {
        processPendingMerges()
        guard let binding = container.binding(of: EntitySchema.of(descriptor.objectClass)) else {
            throw StrataError.misuse("\(descriptor.objectClass) is not one of the container's model classes")
        }
        // A negative offset or limit is the record layer's invalidFetch (checked before any row
        // is read); a huge limit saturates there.
        statistics.fetches += 1
        try descriptor.checkStoreKeys(binding, in: container)
        let request = descriptor.request(binding.name)
        let none = FetchedRowBytes(bytes: [], spans: [], keptCount: 0)
        if descriptor.includesPendingChanges && hasChanges && !pinned {
            return (binding, try fetchWithPendingChanges(request, binding), none)
        }
        let recordReader = try reader()   // first: a newer commit empties the cache, and so makes room
        let most = switch keeping { case .none: 0; case .forFaults: rowCache.room; case .all: Int.max }
        let (pks, rows) = try recordReader.fetchPrimaryKeysAndRowBytes(request, keepingAtMost: most)
        // A key above Int64.max (a forged counter) names no object.
        guard pks.contains(where: { $0 > UInt64(Int64.max) }) else { return (binding, pks.map { Int64($0) }, rows) }
        let kept = pks.indices.filter { pks[$0] <= UInt64(Int64.max) }
        let keptRows = rows.spans.isEmpty
            ? none : FetchedRowBytes(bytes: rows.bytes, spans: kept.map { rows.spans[$0] }, keptCount: rows.keptCount)
        return (binding, kept.map { Int64(pks[$0]) }, keptRows)
    }

    /// Runs the fetch in a write transaction holding the unsaved changes, then rolls it back.
    private func fetchWithPendingChanges(_ request: FetchRequest, _ binding: EntityBinding) throws -> [Int64] {
        try withPendingChanges(binding) { tx, raw in try tx.fetch(request).compactMap { raw($0.primaryKey) } }
    }

    /// Runs `body` in a write transaction holding the unsaved changes, then rolls it back.
    /// `body` gets the raw identity of an object of `binding`'s entity by its primary key in the
    /// transaction (an unsaved insert's temporary one; nil for a key above `Int64.max`, which no
    /// identity holds).
    func withPendingChanges<T>(_ binding: EntityBinding,
                               _ body: (RecordTransaction, (UInt64) -> Int64?) throws -> T) throws -> T {
        var result: T?
        do {
            try container.store.write { tx in
                let pks = try applyForFetch(tx)
                // Primary keys are per entity: map back only this entity's inserted objects.
                var back: [Int64: Int64] = [:]
                for (key, _) in inserted where key.entity == binding.index {
                    if let pk = pks[key.raw] { back[pk] = key.raw }
                }
                result = try body(tx) { primaryKey in Int64(exactly: primaryKey).map { back[$0] ?? $0 } }
                throw PendingChangesDiscarded()
            }
        } catch is PendingChangesDiscarded {}
        return result!
    }

    /// The context's changes written into `tx` (no conflict checks): temporary → primary keys.
    private func applyForFetch(_ tx: RecordTransaction) throws -> [Int64: Int64] {
        var writer = ChangeWriter(context: self, tx: tx)
        try writer.insert(insertOrder.compactMap { inserted[$0] })
        for object in Self.inKeyOrder(updated) {
            // A row another save deleted stays deleted for the fetch (the save itself resolves
            // it by the merge policy).
            guard let binding = binding(object), let id = writer.recordID(object._rawID, binding),
                  try tx.exists(id) else { continue }
            try writer.update(object, binding, slots: writer.changedSlots(object, binding))
        }
        try writer.writeLinks(pendingLinks)
        try writer.delete(Self.inKeyOrder(deleted))
        return writer.primaryKeys
    }
}

/// Thrown to roll back the transaction ``ModelContext/withPendingChanges(_:_:)`` wrote the
/// unsaved changes into, once `body` has read what it needed.
private struct PendingChangesDiscarded: Error {}

/// Objects a fetch made, all of one class: what ``ModelContext/fetch(_:)`` returns as `[T]`.
@usableFromInline
struct FetchedObjects {
    @usableFromInline let objects: [ManagedObject]
    /// The class of every object (the binding's class, found by the fetched class's schema).
    @usableFromInline let objectClass: ManagedObject.Type

    @usableFromInline
    init(objects: [ManagedObject], objectClass: ManagedObject.Type) {
        self.objects = objects
        self.objectClass = objectClass
    }

    /// The objects as `[T]`. Every object is of `objectClass`, which is `T` when the fetch was
    /// of `T`: each is then converted with `unsafeDowncast`, which the class check makes safe
    /// (and which checks it again in debug builds), instead of a dynamic `as?` cast per object.
    @inlinable
    func cast<T: ManagedObject>(to type: T.Type) -> [T] {
        guard objectClass == T.self else { return objects.compactMap { $0 as? T } }
        return objects.map { unsafeDowncast($0, to: T.self) }
    }
}
