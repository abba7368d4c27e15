/// An entity: a kind of object, with its attributes, relationships, derived attributes,
/// constraints and indexes.
public struct Entity: Sendable {
    /// The entity's name, unique in the model.
    public var name: String
    /// The entity's name in the previous model version, for a lightweight migration.
    public var renamingIdentifier: String?
    var members: [EntityMember]

    /// An entity named `name` with the attributes, relationships, derived attributes, constraints and
    /// indexes declared in `members`; `renamedFrom` is its name in the previous model version.
    public init(_ name: String, renamedFrom: String? = nil, @EntityBuilder _ members: () -> [EntityMember]) {
        self.name = name
        self.renamingIdentifier = renamedFrom
        self.members = members()
    }

    /// An entity with the declarations in `members`, for models built by code.
    public init(_ name: String, renamedFrom: String? = nil, members: [EntityMember]) {
        self.name = name
        self.renamingIdentifier = renamedFrom
        self.members = members
    }
}
