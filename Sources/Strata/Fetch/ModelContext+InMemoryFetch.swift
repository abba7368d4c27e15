import StrataRecords

extension FetchDescriptor {
    /// Whether the fetch filters or sorts in memory (inlined where `T` is known: in generic
    /// code the empty check looked up two generic metadata, ~900 instructions).
    @inlinable
    var refinesInMemory: Bool { inMemoryFilter != nil || !inMemorySortBy.isEmpty }
}

extension ModelContext {
    /// A fetch with an in-memory filter or sort: the store's part without limit and offset,
    /// objects loaded in one read (the filter and the keys read them), then filter, sort,
    /// offset and limit in memory.
    @usableFromInline
    func fetchRefinedInMemory<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        if descriptor.fetchOffset < 0 || (descriptor.fetchLimit ?? 0) < 0 {
            throw StrataError.invalidFetch("offset (\(descriptor.fetchOffset)) and limit "
                + "(\(descriptor.fetchLimit.map(String.init) ?? "nil")) must not be negative")
        }
        var store = descriptor
        store.inMemoryFilter = nil
        store.inMemorySortBy = []
        store.fetchLimit = nil
        store.fetchOffset = 0
        store.returnsObjectsAsFaults = false
        var objects = try fetch(store)
        if let filter = descriptor.inMemoryFilter { objects = objects.filter(filter) }
        if !descriptor.inMemorySortBy.isEmpty {
            let columns = descriptor.inMemorySortBy.map { $0.column(objects) }
            // Ties keep the store's order (its sortBy, then primary keys).
            let order = objects.indices.sorted { i, j in
                for compare in columns {
                    let comparison = compare(i, j)
                    if comparison != 0 { return comparison < 0 }
                }
                return i < j
            }
            objects = order.map { objects[$0] }
        }
        let start = min(descriptor.fetchOffset, objects.count)
        let end = descriptor.fetchLimit.map { start + min($0, objects.count - start) } ?? objects.count
        return Array(objects[start..<end])
    }

    /// Throws for a store predicate or sort naming a computed or transient property, saying
    /// to filter or sort it in memory (the record layer alone would call the name unknown,
    /// or transient without the way out).
    func checkStoreKeys(of descriptor: StoreFetch, _ root: EntityBinding) throws {
        try descriptor.forEachStoreKeyPath { path in
            var binding = root
            for (i, name) in path.enumerated() {
                if let slot = binding.schema.slotByName[name] {
                    // The slot's kind, not its declaration (copying a `Property` per check).
                    if binding.schema.slotKinds[slot] == .transient {
                        throw StrataError.invalidFetch("'\(name)' of \(binding.name) is transient: "
                            + "the store cannot filter or sort by it; "
                            + "use the fetch's inMemoryFilter or inMemorySortBy")
                    }
                    guard i < path.count - 1, binding.targetEntity[slot] >= 0 else { break }
                    binding = container.bindings[binding.targetEntity[slot]]
                } else {
                    if binding.schema.computed(named: name) != nil {
                        throw StrataError.invalidFetch("'\(name)' of \(binding.name) is a computed property: "
                            + "the store cannot filter or sort by it; "
                            + "use the fetch's inMemoryFilter or inMemorySortBy")
                    }
                    // A computed property is known by name from the container's open when its
                    // class lists it in computedProperties, else once read; before that, and for
                    // any other Swift property, the store only knows it has no such property.
                    throw StrataError.invalidFetch("\(binding.name) has no stored property '\(name)' "
                        + "(in '\(path.joined(separator: "."))'); "
                        + "to filter or sort by a computed property, use the fetch's inMemoryFilter or inMemorySortBy")
                }
            }
        }
    }
}
