/// A context's registered objects, unowned, by entity and identity: one table per entity keyed
/// by the raw identity alone, so an entry is 16 bytes (a registered fault must stay small: a
/// combined entity-and-identity key made entries 24 bytes, about 50 bytes per fault with the
/// table's free buckets). Objects remove themselves when released.
struct ObjectRegistry {
    private var byEntity: [KeyTable<Unmanaged<ManagedObject>>] = []

    /// The object registered under `key`; setting nil removes it.
    subscript(key: ModelContext.Key) -> Unmanaged<ManagedObject>? {
        get { key.entity < byEntity.count ? byEntity[key.entity][key.raw] : nil }
        set {
            guard newValue != nil || key.entity < byEntity.count else { return }
            makeTable(for: key.entity)
            byEntity[key.entity][key.raw] = newValue
        }
    }

    /// Registers `object` under `key`, which the caller just found free.
    mutating func insert(_ object: Unmanaged<ManagedObject>, underAbsent key: ModelContext.Key) {
        makeTable(for: key.entity)
        byEntity[key.entity].insert(object, underAbsent: key.raw)
    }

    /// Adds empty tables up to `entity`'s.
    private mutating func makeTable(for entity: Int) {
        if entity >= byEntity.count { byEntity += Array(repeating: KeyTable(), count: entity + 1 - byEntity.count) }
    }

    @discardableResult
    mutating func removeValue(forKey key: ModelContext.Key) -> Unmanaged<ManagedObject>? {
        key.entity < byEntity.count ? byEntity[key.entity].removeValue(forKey: key.raw) : nil
    }

    /// Removes the entry under `key` if it is `object` (one probe: a released object unregisters
    /// itself, unless another object took its identity since).
    mutating func remove(_ key: ModelContext.Key, ifItIs object: ManagedObject) -> Bool {
        guard key.entity < byEntity.count else { return false }
        let address = Unmanaged.passUnretained(object).toOpaque()
        return byEntity[key.entity].removeValue(forKey: key.raw) { $0.toOpaque() == address }
    }

    /// Grows `entity`'s table to hold `count` objects, or as many as it holds already if that is
    /// more (a fetch of objects that are mostly registered adds few).
    mutating func reserveCapacity(_ count: Int, entity: Int) {
        guard entity >= 0, count > 0 else { return }
        makeTable(for: entity)
        byEntity[entity].reserveCapacity(max(count, byEntity[entity].count))
    }

    /// Every registered object.
    var objects: [ManagedObject] { byEntity.flatMap { $0.elements.map { $0.takeUnretainedValue() } } }

    mutating func removeAll() { byEntity = [] }
}
