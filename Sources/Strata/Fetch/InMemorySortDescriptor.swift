/// An order by a property the store cannot sort by — a computed or transient one — applied
/// in memory (``FetchDescriptor/inMemorySortBy``).
///
/// ```swift
/// var descriptor = FetchDescriptor<BlogPost>()
/// descriptor.inMemorySortBy = [InMemorySortDescriptor(\.title)]
/// ```
///
/// Each object's key is read once per fetch, then compared: with the value type's `<`
/// (strings in Unicode order), or with the comparison given.
public struct InMemorySortDescriptor<T: ManagedObject> {
    /// Given the objects to sort, the comparison of the objects at two indices (< 0, 0, > 0),
    /// over keys read once.
    let column: ([T]) -> (Int, Int) -> Int

    /// Orders by `keyPath`, ascending or descending.
    public init<V: Comparable>(_ keyPath: KeyPath<T, V>, ascending: Bool = true) {
        self.init(keyPath, ascending: ascending, by: <)
    }

    /// Orders by `keyPath`; nil comes first in ascending order, last in descending.
    public init<V: Comparable>(_ keyPath: KeyPath<T, V?>, ascending: Bool = true) {
        self.init(keyPath, ascending: ascending) { lhs, rhs in
            guard let rhs else { return false }
            guard let lhs else { return true }
            return lhs < rhs
        }
    }

    /// Orders by `keyPath` with `areInIncreasingOrder` (a strict weak order).
    public init<V>(_ keyPath: KeyPath<T, V>, ascending: Bool = true,
                   by areInIncreasingOrder: @escaping (V, V) -> Bool) {
        column = { objects in
            let keys = objects.map { $0[keyPath: keyPath] }
            let sign = ascending ? 1 : -1
            return { i, j in
                if areInIncreasingOrder(keys[i], keys[j]) { return -sign }
                if areInIncreasingOrder(keys[j], keys[i]) { return sign }
                return 0
            }
        }
    }
}
