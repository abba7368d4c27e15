/// One object's change in a recorded transaction (``HistoryTransaction``).
public struct HistoryChange: Sendable, Equatable {
    /// What happened to the object.
    public enum Kind: UInt8, Sendable, Equatable {
        /// The object was inserted: ``HistoryChange/values`` holds every property that is not
        /// `nil`, ``HistoryChange/toOneTargets`` every to-one that is set.
        case insert = 1
        /// The object's properties changed: the ones that changed, with their new values
        /// (derived values the commit moved included).
        case update = 2
        /// The object was deleted: the values of the attributes its model keeps after deletion
        /// (``AttributeDescription/isPreservedAfterDeletion``).
        case delete = 3
        /// A many-to-many link was made: ``HistoryChange/relationship`` now reaches
        /// ``HistoryChange/other`` (listed once from each side).
        case link = 4
        /// A many-to-many link was broken (listed once from each side).
        case unlink = 5
    }

    /// What happened to the object.
    public var kind: Kind
    /// The object.
    public var id: ObjectID
    /// Attribute values (stored and derived) by name: see ``Kind`` for which are listed.
    public var values: [String: StoredValue]
    /// The names in ``values`` that are derived attributes, which the commit computed.
    public var derivedNames: Set<String>
    /// To-one relationships by name: the target, or `nil` when the relationship was cleared.
    public var toOneTargets: [String: ObjectID?]
    /// The many-to-many relationship of a ``Kind/link`` or ``Kind/unlink``; `nil` otherwise.
    public var relationship: String?
    /// The object on the other side of a ``Kind/link`` or ``Kind/unlink``; `nil` otherwise.
    public var other: ObjectID?

    /// A change of `kind` to `id`, with the values and targets it lists.
    public init(kind: Kind, id: ObjectID, values: [String: StoredValue] = [:], derivedNames: Set<String> = [],
                toOneTargets: [String: ObjectID?] = [:], relationship: String? = nil, other: ObjectID? = nil) {
        self.kind = kind
        self.id = id
        self.values = values
        self.derivedNames = derivedNames
        self.toOneTargets = toOneTargets
        self.relationship = relationship
        self.other = other
    }
}
