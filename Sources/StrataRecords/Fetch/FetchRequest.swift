/// What to fetch: objects of one entity that match a predicate, in an order, a page of them.
public struct FetchRequest: Sendable {
    public var entity: String
    public var predicate: Predicate?
    public var sortDescriptors: [SortDescriptor]
    public var limit: Int?
    public var offset: Int

    public init(_ entity: String, predicate: Predicate? = nil, sortedBy sortDescriptors: [SortDescriptor] = [],
                limit: Int? = nil, offset: Int = 0) {
        self.entity = entity
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.limit = limit
        self.offset = offset
    }
}

/// One sort key: a key path (an attribute, a derived attribute, or through to-one relationships)
/// and a direction. Values sort as ``Value/compare(_:_:)`` orders them, `nil` first.
public struct SortDescriptor: Hashable, Sendable {
    public var keyPath: String
    public var ascending: Bool

    public init(_ keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }
}
