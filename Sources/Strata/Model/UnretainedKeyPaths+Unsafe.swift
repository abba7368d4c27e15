/// A schema's observation key paths, unretained, by slot: what ``ManagedObject/_trackAccess(slot:)``
/// reads to tell Swift Observation of a property read without counting a reference to the key
/// path (decision 55).
///
/// Invariants: the buffer holds exactly `count` initialized entries, written once in `init` and
/// never changed; each is an unretained reference to a key path that the schema's
/// `observationKeys` array keeps alive, and the schema (which is never freed while an object of
/// its class exists: ``EntitySchema/everyBuilt``) frees the buffer once, in its `deinit`, through
/// ``free()``. A read checks its slot against `count` in every build.
struct UnretainedKeyPaths {
    private let base: UnsafeMutablePointer<Unmanaged<KeyPath<ManagedObject, Int>>>
    let count: Int

    /// Unretained references to `keys`, which the caller keeps alive for this table's life.
    init(_ keys: [KeyPath<ManagedObject, Int>]) {
        count = keys.count
        base = .allocate(capacity: max(keys.count, 1))
        for (index, key) in keys.enumerated() {
            (base + index).initialize(to: Unmanaged.passUnretained(key))
        }
    }

    /// The key path of `slot`, unretained.
    @inline(__always)
    subscript(slot: Int) -> Unmanaged<KeyPath<ManagedObject, Int>> {
        precondition(slot >= 0 && slot < count, "slot \(slot) of \(count)")
        return base[slot]
    }

    /// Frees the table; nothing may read it after.
    func free() {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
