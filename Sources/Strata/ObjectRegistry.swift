/// A context's registered objects, unowned, by entity and identity: one dictionary per entity
/// keyed by the raw identity alone, so an entry is 16 bytes (a registered fault must stay small:
/// a combined entity-and-identity key made entries 24 bytes, about 50 bytes per fault with the
/// table's free buckets). Objects remove themselves when released.
struct ObjectRegistry {
    private var byEntity: [[Int64: Unmanaged<ManagedObject>]] = []

    /// The object registered under `key`; setting nil removes it.
    subscript(key: ModelContext.Key) -> Unmanaged<ManagedObject>? {
        get { key.entity < byEntity.count ? byEntity[key.entity][key.raw] : nil }
        set {
            if key.entity >= byEntity.count {
                guard newValue != nil else { return }
                byEntity += Array(repeating: [:], count: key.entity + 1 - byEntity.count)
            }
            byEntity[key.entity][key.raw] = newValue
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: ModelContext.Key) -> Unmanaged<ManagedObject>? {
        key.entity < byEntity.count ? byEntity[key.entity].removeValue(forKey: key.raw) : nil
    }

    /// Every registered object.
    var objects: [ManagedObject] { byEntity.flatMap { $0.values.map { $0.takeUnretainedValue() } } }

    mutating func removeAll() { byEntity = [] }
}
