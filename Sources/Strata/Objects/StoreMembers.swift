/// A to-many's members as one commit of the store holds them.
struct StoreMembers {
    /// The commit they were read from.
    var generation: UInt64
    var raws: [Int64]
}
