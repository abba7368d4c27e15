/// A stable object identifier: the entity and an engine-assigned 64-bit primary key, never
/// reused, valid across reopening.
public struct ObjectID: Hashable, Sendable, CustomStringConvertible, ValueConvertible {
    /// The name of the object's entity.
    public let entity: String
    /// The engine-assigned primary key, unique within the entity and never reused.
    public let primaryKey: UInt64

    /// The identifier of the object of `entity` with `primaryKey`. Nothing is checked here: using an
    /// identifier that names no row throws `StrataError.objectNotFound`.
    public init(entity: String, primaryKey: UInt64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }

    /// `Entity/primaryKey`, for logs and messages.
    public var description: String { "\(entity)/\(primaryKey)" }

    /// To-one relationships are stored as the target's primary key.
    public var strataValue: StoredValue { .int(Int64(bitPattern: primaryKey)) }
}
