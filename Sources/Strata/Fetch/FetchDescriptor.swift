import StrataRecords

/// A fetch of objects of one model class: predicate, sort, limit and offset, and how the
/// objects come back.
///
/// ```swift
/// var descriptor = FetchDescriptor<Item>(predicate: try FetchPredicate(format: "done == NO"),
///                                        sortBy: [FetchSortDescriptor("title")])
/// descriptor.fetchLimit = 20
/// let items = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<T: ManagedObject> {
    /// The filter, in the record layer's predicate language (nil: every object).
    public var predicate: FetchPredicate?
    /// The order of the results.
    public var sortBy: [FetchSortDescriptor]
    /// At most this many objects (nil: no limit). A negative limit makes the fetch throw
    /// `invalidFetch`.
    public var fetchLimit: Int?
    /// Objects to skip first. A negative offset makes the fetch throw `invalidFetch`.
    public var fetchOffset: Int = 0
    /// Whether the context's unsaved inserts, changes and deletes count (they are applied in
    /// a transaction that is rolled back, so predicates, sorts and derived values see them
    /// exactly as a save would).
    public var includesPendingChanges = true
    /// Whether objects come back as faults (values read on first access) or loaded.
    public var returnsObjectsAsFaults = true
    /// With a value above 0 (and objects returned as faults), the results are cut into slices
    /// of this many: the first access to a fault of a slice loads the whole slice with one read
    /// of many rows (batch faulting) instead of one read per object.
    public var fetchBatchSize = 0
    /// Relationships whose targets are read with the objects (`"list"`, `"items"`): the
    /// objects are loaded, then each relationship's target rows are read at once and kept
    /// until the targets' faults fire (or the context reads a newer commit), so touching them
    /// reads nothing more. An unknown name throws `invalidFetch`.
    public var relationshipKeyPathsForPrefetching: [String] = []

    /// A filter the store cannot apply, run in memory on the objects the store's fetch
    /// returns: for computed and transient properties (`{ $0.isSelected }`), which store
    /// predicates reject. Limit and offset then apply after it (see ``inMemorySortBy``).
    public var inMemoryFilter: ((T) -> Bool)?
    /// An order the store cannot give, applied in memory after ``sortBy`` (which breaks its
    /// ties): by computed and transient properties, which store sorts reject. With an
    /// in-memory filter or sort, the store reads every object the predicate selects (loaded,
    /// in one read) and ``fetchLimit`` and ``fetchOffset`` apply last, in memory.
    public var inMemorySortBy: [InMemorySortDescriptor<T>] = []

    /// A fetch of `T` objects. Inlinable: a fetch made per query is then built with no generic
    /// metadata look-up.
    @inlinable
    public init(predicate: FetchPredicate? = nil, sortBy: [FetchSortDescriptor] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// This fetch with `values` for its predicate's `$variables` (a template, as Core Data's
    /// fetch-request templates with substitution variables):
    ///
    /// ```swift
    /// let bySKU = FetchDescriptor<Item>(predicate: try FetchPredicate(format: "sku == $sku"))
    /// let item = try context.fetch(try bySKU.substituting(["sku": .string(code)])).first
    /// ```
    ///
    /// Fetches of one template share their plan: the store checks and plans a request's shape
    /// once, whatever its constants (docs/decisions.md §36).
    ///
    /// - Throws: `StrataError.invalidFetch` naming a variable `values` has no value for.
    public func substituting(_ values: [String: StoredValue]) throws -> FetchDescriptor<T> {
        var descriptor = self
        descriptor.predicate = try predicate?.substituting(values)
        return descriptor
    }
}
