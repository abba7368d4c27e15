import StrataRecords
import Synchronization

/// The identity of a managed object, valid across contexts: the value to send between tasks
/// and actors (objects and contexts stay in their isolation domain).
///
/// An object inserted into a context has a *temporary* identifier until its context saves it
/// (or ``ModelContext/obtainPermanentIDs(for:)`` runs); then it has a permanent one, its
/// entity and primary key, valid across reopening. The context that held the temporary
/// identifier keeps answering it with the same object.
public struct ManagedObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The name of the object's entity.
    public let entityName: String
    /// Positive: the primary key; negative: a temporary identifier.
    let rawValue: Int64

    init(entityName: String, rawValue: Int64) {
        self.entityName = entityName
        self.rawValue = rawValue
    }

    /// The identifier of the stored object of `entityName` with `primaryKey` (for identifiers
    /// kept outside the program, as ``uriRepresentation`` gives them). Objects have primary keys
    /// from 1 to `Int64.max`: an identifier made from another key names no object (its
    /// ``primaryKey`` is nil, and ``ModelContext/object(with:)`` throws `misuse` for it).
    public init(entityName: String, primaryKey: UInt64) {
        self.entityName = entityName
        // 0 is no identity (not a primary key, not a temporary identifier); masking the high
        // bit off instead made the identifier name another object.
        self.rawValue = Int64(exactly: primaryKey) ?? 0
    }

    /// Whether the object has not been saved yet (the identifier changes when it is).
    public var isTemporaryID: Bool { rawValue < 0 }

    /// The primary key, for a permanent identifier.
    public var primaryKey: UInt64? { rawValue > 0 ? UInt64(rawValue) : nil }

    /// `strata://Entity/pk`, or `strata://Entity/t<n>` for a temporary identifier.
    public var uriRepresentation: String {
        rawValue > 0 ? "strata://\(entityName)/\(rawValue)" : "strata://\(entityName)/t\(rawValue.magnitude)"
    }

    /// `Entity/pk` (`Entity/t<n>` when temporary). Magnitudes, not negations: a to-one stored
    /// naming a key above `Int64.max` reads back as `Int64.min`, which `-` traps on.
    public var description: String {
        rawValue > 0 ? "\(entityName)/\(rawValue)" : "\(entityName)/t\(rawValue.magnitude)"
    }

    /// The record layer's identifier, for a permanent identifier.
    var recordID: ObjectID? { primaryKey.map { ObjectID(entity: entityName, primaryKey: $0) } }

    private static let nextTemporary = Atomic<Int64>(0)

    /// A fresh temporary raw value, unique in the process.
    static func makeTemporaryRawValue() -> Int64 {
        -(nextTemporary.add(1, ordering: .relaxed).newValue)
    }
}
