/// Why an object's values were replaced from a snapshot (``ManagedObject/awake(fromSnapshotEvents:)``).
public struct SnapshotEvents: OptionSet, Sendable {
    public let rawValue: Int
    /// Creates events from their raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The context rolled back the object's changes.
    public static let rollback = SnapshotEvents(rawValue: 1)
    /// The object was refreshed (``ModelContext/refresh(_:mergeChanges:)``).
    public static let refresh = SnapshotEvents(rawValue: 2)
    /// Another context's save was merged into the object.
    public static let mergePolicy = SnapshotEvents(rawValue: 4)
    /// Derived values or other objects' saves changed the object's stored values.
    public static let merge = SnapshotEvents(rawValue: 8)
}
