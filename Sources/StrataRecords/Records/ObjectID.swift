import StrataStorage

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
    public var strataValue: Value { .int(Int64(bitPattern: primaryKey)) }
}

/// A row inside the engine: entity index and primary key.
struct RowKey: Hashable, Sendable {
    var entity: Int
    var pk: UInt64

    /// One word to hash: the entity index in the top 16 bits (models have far fewer
    /// entities), the primary key's low 48 bits below. Equal keys hash equally; the few
    /// keys that collide are still told apart by `==`.
    func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(truncatingIfNeeded: entity) << 48 ^ pk)
    }

    /// The hash `Dictionary` and `Set` use: the same word, mixed without `Hasher` (a
    /// transaction looks each row up several times; see ``WordHash``).
    func _rawHashValue(seed: Int) -> Int {
        WordHash.hash(UInt64(truncatingIfNeeded: entity) << 48 ^ pk, seed: seed)
    }
}
