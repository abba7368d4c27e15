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
    public init(_ entity: String, predicate: FetchPredicate? = nil, sortedBy sortDescriptors: [FetchSortDescriptor] = [],
                limit: Int? = nil, offset: Int = 0) {
        self.entity = entity
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.limit = limit
        self.offset = offset
    }
}

/// One sort key: a key path (an attribute, a derived attribute, or through to-one relationships)
/// and a direction. Values sort as ``StoredValue/compare(_:_:)`` orders them, which is the order of
/// their index keys: `nil` first, NaN after every number, strings by the Unicode scalars of
/// their NFC forms. Objects that tie on every sort key come in primary-key order.
public struct FetchSortDescriptor: Hashable, Sendable {
    /// The dotted key path to sort by, such as `name` or `list.name`.
    public var keyPath: String
    /// Whether smaller values come first.
    public var ascending: Bool

    /// Sorts by `keyPath`, smallest value first unless `ascending` is `false`.
    public init(_ keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }
}
