/// Objects by identity (their addresses in a ``KeyTable``), for a save's membership questions
/// ("did this save write it?") without `Set<ObjectIdentifier>`'s SipHash. It holds its
/// objects, so no address is reused while it lives.
struct ObjectSet {
    private var table: KeyTable<ManagedObject>

    /// A set that holds `capacity` objects without growing.
    init(capacity: Int = 0) { table = KeyTable(capacity: capacity) }

    /// The key of `object`: its address.
    @inline(__always)
    static func address(_ object: ManagedObject) -> Int64 { Int64(Int(bitPattern: ObjectIdentifier(object))) }

    mutating func insert(_ object: ManagedObject) { table[Self.address(object)] = object }

    func contains(_ object: ManagedObject) -> Bool { table[Self.address(object)] === object }
}
