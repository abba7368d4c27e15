import StrataRecords

/// A model class bound to its entity in a container's record model: how object slots map to
/// row slots, and where each relationship leads.
final class EntityBinding: @unchecked Sendable {
    let schema: EntitySchema
    let entity: EntityDescription
    /// By object slot: the row slot (-1: a to-many relationship, which has none).
    let rowField: [Int]
    /// By row slot: the object slot (-1: bookkeeping the object does not show).
    let slotOfRowField: [Int]
    /// By object slot, for relationships: the target's binding index and the inverse's slot there.
    /// Written only while the container opens (every binding must exist first), read on every
    /// relationship access after: unchecked, or each read paid a run-time exclusivity check
    /// (two per to-one set).
    @exclusivity(unchecked) var targetEntity: [Int]
    @exclusivity(unchecked) var inverseSlot: [Int]
    /// By object slot: the relationship's record description (nil for other properties).
    let relationships: [ResolvedRelationship?]
    /// The stored-property slots (attributes and to-ones): what optimistic locking compares.
    let lockedSlots: [Int]
    /// Whether every slot is a locked slot, in order (no derived, transient or to-many
    /// property): an object's values then are what an insert writes, as they are, once its
    /// to-ones name written rows.
    let lockedSlotsAreAll: Bool
    /// Whether a row's fields are the object's slots, in order (no to-many, no bookkeeping
    /// field): a decoded row is then the object's values as it is, with no second array.
    let rowIsSlots: Bool

    init(schema: EntitySchema, entity: EntityDescription) {
        self.schema = schema
        self.entity = entity
        var rowField: [Int] = []
        var slotOf = Array(repeating: -1, count: entity.rowFieldCount)
        var relationships: [ResolvedRelationship?] = []
        for (slot, property) in schema.properties.enumerated() {
            let field = property.isToMany ? -1 : (entity.rowFieldIndex(of: property.name) ?? -1)
            rowField.append(field)
            if field >= 0 { slotOf[field] = slot }
            relationships.append(property.isRelationship ? entity.relationship(property.name) : nil)
        }
        self.rowField = rowField
        self.slotOfRowField = slotOf
        self.rowIsSlots = entity.rowFieldCount == rowField.count && rowField.indices.allSatisfy { rowField[$0] == $0 }
        self.relationships = relationships
        self.lockedSlots = schema.properties.indices.filter { slot in
            switch schema.properties[slot].kind {
            case .attribute, .toOne: return rowField[slot] >= 0
            default: return false
            }
        }
        self.lockedSlotsAreAll = lockedSlots == Array(schema.properties.indices)
        self.targetEntity = Array(repeating: -1, count: rowField.count)
        self.inverseSlot = Array(repeating: -1, count: rowField.count)
    }

    var name: String { schema.name }
    var index: Int { entity.index }

    /// The object values of a stored row: the row itself, moved, when its fields are the slots.
    @inline(__always)
    func values(fromRow row: __owned [StoredValue]) -> [StoredValue] {
        if rowIsSlots && row.count == rowField.count { return row }
        var values = schema.initialValues
        for (slot, field) in rowField.enumerated() where field >= 0 && field < row.count { values[slot] = row[field] }
        return values
    }

}
