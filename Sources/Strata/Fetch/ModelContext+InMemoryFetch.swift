import StrataRecords

extension FetchDescriptor {
    /// Whether the fetch filters or sorts in memory (inlined where `T` is known: in generic
    /// code the empty check looked up two generic metadata; decision 56).
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
}
