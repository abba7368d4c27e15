import StrataRecords

/// A property this store and another writer both changed, as a pull found it (decision 111).
///
/// The rule is the same in every store: the write PostgreSQL applies last wins, property by
/// property. A store that changed a property and has not pushed it yet keeps its value at its
/// pull and pushes it after (``Outcome-swift.enum/keptStoreValue``), unless a resolver chose
/// another (``Outcome-swift.enum/resolved(_:)``); a store whose change was pushed and that
/// another writer changed since takes that writer's value (``Outcome-swift.enum/overwritten``):
/// the store's write lost.
public struct ReplicationConflict: Sendable, Equatable, CustomStringConvertible {
    /// How the pull decided.
    public enum Outcome: Sendable, Equatable {
        /// The store's value, not pushed yet, stays and is pushed after the other writer's.
        case keptStoreValue
        /// The store changed the property since its previous pull, and another writer's later
        /// value replaced it: the store's write lost.
        case overwritten
        /// The replicator's resolver chose this value, which the store takes and pushes.
        case resolved(StoredValue)
    }

    /// The row.
    public var row: ObjectID
    /// The property both changed (an attribute, or a to-one holding the target's key).
    public var property: String
    /// The store's value before the pull.
    public var storeValue: StoredValue
    /// The other writer's value, as PostgreSQL held it.
    public var otherValue: StoredValue
    /// The other writer: a store's replication name, or nil for a server application.
    public var otherWriter: String?
    /// What the pull did.
    public var outcome: Outcome

    /// Creates a conflict.
    public init(row: ObjectID, property: String, storeValue: StoredValue, otherValue: StoredValue,
                otherWriter: String?, outcome: Outcome) {
        self.row = row
        self.property = property
        self.storeValue = storeValue
        self.otherValue = otherValue
        self.otherWriter = otherWriter
        self.outcome = outcome
    }

    /// The value the store holds after the pull.
    public var keptValue: StoredValue {
        switch outcome {
        case .keptStoreValue: return storeValue
        case .overwritten: return otherValue
        case .resolved(let value): return value
        }
    }

    /// The conflict, for a person.
    public var description: String {
        let other = otherWriter.map { "store \($0)" } ?? "a server application"
        switch outcome {
        case .keptStoreValue:
            return "\(row).\(property): kept the store's \(storeValue) over \(other)'s \(otherValue)"
        case .overwritten:
            return "\(row).\(property): the store's \(storeValue) lost to \(other)'s \(otherValue)"
        case .resolved(let value):
            return "\(row).\(property): resolved to \(value) (the store's \(storeValue), \(other)'s \(otherValue))"
        }
    }
}
