/// A key path kept alive (so its identity is not reused) with the slot it reaches. Key paths
/// are immutable once made, so sharing them between threads is safe.
struct KeptKeyPath: @unchecked Sendable {
    let keyPath: AnyKeyPath
    let slot: Int
}
