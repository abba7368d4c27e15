// Declared here, beside `StrataError`, because `StrataError.mergeConflicts` carries it and every
// layer throws that one enum (decision 15): a caller switches on one error type whichever layer
// it calls. Its fields are plain names, keys and text, nothing of the object layer's types.

/// One optimistic-locking conflict found by a save (``StrataError/mergeConflicts(_:)``):
/// an object the saving context changed whose row another save changed since the context
/// read it. Values are given as text (``description`` of the record layer's values), keyed
/// by property name; fetch the object again for typed values.
public struct MergeConflictRecord: Sendable, Equatable, CustomStringConvertible {
    /// The object's entity.
    public var entity: String
    /// The object's primary key.
    public var primaryKey: UInt64
    /// The properties whose stored values differ from the snapshot the context read.
    public var properties: [String]
    /// The values the context read (its snapshot), for ``properties``.
    public var snapshot: [String: String]
    /// The values the context's object holds now, for ``properties``.
    public var cached: [String: String]
    /// The values in the store, for ``properties``; `nil` when another save deleted the object.
    public var persisted: [String: String]?

    /// A conflict record; see the properties.
    public init(entity: String, primaryKey: UInt64, properties: [String], snapshot: [String: String],
                cached: [String: String], persisted: [String: String]?) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.properties = properties
        self.snapshot = snapshot
        self.cached = cached
        self.persisted = persisted
    }

    /// `Entity/pk: properties (deleted in the store)`.
    public var description: String {
        "\(entity)/\(primaryKey): \(persisted == nil ? "deleted in the store" : properties.joined(separator: ", "))"
    }
}
