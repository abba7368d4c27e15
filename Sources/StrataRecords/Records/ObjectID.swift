/// A stable object identifier: the entity and an engine-assigned 64-bit primary key, never
/// reused, valid across reopening.
public struct ObjectID: Hashable, Sendable, CustomStringConvertible, ValueConvertible {
    public let entity: String
    public let primaryKey: UInt64

    public init(entity: String, primaryKey: UInt64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }

    public var description: String { "\(entity)/\(primaryKey)" }

    /// To-one relationships are stored as the target's primary key.
    public var strataValue: Value { .int(Int64(bitPattern: primaryKey)) }
}

/// A row inside the engine: entity index and primary key.
struct RowKey: Hashable, Sendable {
    var entity: Int
    var pk: UInt64
}
