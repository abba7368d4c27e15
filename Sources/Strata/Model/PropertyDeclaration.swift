/// What one property wrapper declares, as captured while a class's schema is built.
enum PropertyDeclaration {
    case attribute(AttributeDeclaration)
    case relationship(RelationshipDeclaration)
    case derived(DerivedDeclaration)
}
