/// One declaration inside an `Entity { … }` block.
public struct EntityMember: Sendable {
    enum Kind: Sendable {
        case attribute(AttributeDescription), relationship(RelationshipDescription),
             derived(DerivedAttributeDescription), unique(Unique), index(FetchIndex), fullText(FullTextIndex)
    }
    let kind: Kind
    init(kind: Kind) { self.kind = kind }
    /// An attribute declaration, for models built by code rather than in an `Entity { … }` block.
    public init(_ attribute: AttributeDescription) { kind = .attribute(attribute) }
    /// A relationship declaration.
    public init(_ relationship: RelationshipDescription) { kind = .relationship(relationship) }
    /// A derived attribute declaration.
    public init(_ derived: DerivedAttributeDescription) { kind = .derived(derived) }
    /// A uniqueness constraint.
    public init(_ unique: Unique) { kind = .unique(unique) }
    /// A fetch index.
    public init(_ index: FetchIndex) { kind = .index(index) }
    /// A word index.
    public init(_ index: FullTextIndex) { kind = .fullText(index) }
}
