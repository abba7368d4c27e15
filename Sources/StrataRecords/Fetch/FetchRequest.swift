/// What to fetch: objects of one entity that match a predicate, in an order, a page of them.
public struct FetchRequest: Hashable, Sendable {
    /// The name of the entity whose objects are fetched.
    public var entity: String
    /// The condition an object must meet; `nil` fetches every object of the entity.
    public var predicate: FetchPredicate?
    /// The order of the results, first key first; empty leaves the order unspecified.
    public var sortDescriptors: [FetchSortDescriptor]
    /// The most objects returned (after `offset` are skipped); `nil` for no limit.
    public var limit: Int?
    /// How many matching objects, in order, to skip before the first one returned.
    public var offset: Int
    /// Whether the planner may use indexes; tests turn it off to run the same request as a
    /// scan, whose answer every index plan must equal.
    var usesIndexes = true

    /// A request for the objects of `entity` that match `predicate`, in `sortDescriptors` order,
    /// skipping `offset` and returning at most `limit`.
    public init(_ entity: String, predicate: FetchPredicate? = nil,
                sortedBy sortDescriptors: [FetchSortDescriptor] = [], limit: Int? = nil, offset: Int = 0) {
        self.entity = entity
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.limit = limit
        self.offset = offset
    }
}
