import StrataRecords

/// An object a step names: weakly, with its identity to find it again once released (a fault
/// of its row) and its entity to make it again (an insert redone after its object went).
final class UndoReference {
    weak var object: ManagedObject?
    /// The object's entity index in the container's bindings.
    let entity: Int
    /// The object's identity when last seen: a primary key, or a temporary identifier the
    /// context maps to the primary key its save gave.
    var raw: Int64

    init(_ object: ManagedObject, entity: Int) {
        self.object = object
        self.entity = entity
        self.raw = object._rawID
    }
}

/// A property's value in a step: stored values as they are, to-one targets as references (a
/// target's identity changes when it is saved or inserted again).
enum UndoValue {
    case stored(StoredValue)
    case target(UndoReference?)
}

/// One closed event: what undo takes back and redo makes again.
struct UndoStep {
    struct Change {
        var object: UndoReference
        var slot: Int
        var before: UndoValue
        var after: UndoValue
    }

    struct Link {
        var owner: UndoReference
        var slot: Int
        var member: UndoReference
        var added: Bool
    }

    /// `owner`'s to-one in `slot` naming `target`, which a nullify rule will clear.
    struct Severed {
        var owner: UndoReference
        var slot: Int
        var target: UndoReference
    }

    var name: String?
    /// Objects the event inserted, with their values at its end (to insert them again).
    var inserted: [(object: UndoReference, values: [UndoValue])] = []
    /// Objects the event deleted, with their values then, in order; `byRule`: an object a
    /// cascade rule will delete at the save (not deleted in the context: restored only if the
    /// save did).
    var deleted: [(object: UndoReference, values: [UndoValue], byRule: Bool)] = []
    /// Many-to-many links the deletes' rules will break at the save (or broke at once, for an
    /// inserted object), to make again.
    var severedLinks: [Link] = []
    /// To-ones naming a deleted object that the save will clear (`owner`'s `slot` naming
    /// `member`), to name it again once it is back; each is also a change of the event, set after.
    var severedToOnes: [Severed] = []
    /// Values the event changed, in order, of objects it did not insert (a deleted object's
    /// changes before its delete included).
    var changes: [Change] = []
    /// Many-to-many links made or broken, in order (the primary side).
    var links: [Link] = []

    var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && changes.isEmpty && links.isEmpty }
}

/// The open event's changes, kept as the context makes them: objects held strongly (the
/// context holds changed objects strongly too) until the event closes into an ``UndoStep``.
struct UndoRecording {
    /// A slot of one object of the event.
    struct Slot: Hashable {
        var object: ObjectIdentifier
        var slot: Int
    }

    struct Touched {
        var object: ManagedObject
        /// Each changed slot's value before the event's first change of it.
        var before: [Int: StoredValue] = [:]
        var order: [Int] = []
    }

    var name: String?
    var touched: [ObjectIdentifier: Touched] = [:]
    var touchOrder: [ObjectIdentifier] = []
    var inserted: [ManagedObject] = []
    var deleted: [(object: ManagedObject, values: [StoredValue], byRule: Bool)] = []
    var severedLinks: [(owner: ManagedObject, slot: Int, member: ManagedObject)] = []
    var severedToOnes: [(owner: ManagedObject, slot: Int, target: ManagedObject)] = []
    var links: [(owner: ManagedObject, slot: Int, member: ManagedObject, added: Bool)] = []

    var isEmpty: Bool { touched.isEmpty && inserted.isEmpty && deleted.isEmpty && links.isEmpty }

    /// Notes `slot`'s value before its first change in the event.
    mutating func willChange(_ object: ManagedObject, slot: Int) {
        let id = ObjectIdentifier(object)
        if touched[id] == nil {
            touched[id] = Touched(object: object)
            touchOrder.append(id)
        }
        guard touched[id]!.before[slot] == nil else { return }
        touched[id]!.before[slot] = object._values[slot]
        touched[id]!.order.append(slot)
    }

    /// Notes an insert.
    mutating func didInsert(_ object: ManagedObject) {
        inserted.append(object)
    }

    /// Whether `object` was inserted in this event; if so it is forgotten (an object inserted
    /// and deleted in one event leaves no trace).
    mutating func forgetInsert(of object: ManagedObject) -> Bool {
        guard let index = inserted.firstIndex(where: { $0 === object }) else { return false }
        inserted.remove(at: index)
        let id = ObjectIdentifier(object)
        touched[id] = nil
        touchOrder.removeAll { $0 == id }
        links.removeAll { $0.owner === object || $0.member === object }
        return true
    }

    /// The many-to-many links of the event by their net effect: a link made and broken again
    /// (or broken and made) is no change.
    func netLinks() -> [(owner: ManagedObject, slot: Int, member: ManagedObject, added: Bool)] {
        struct Pair: Hashable {
            var owner: ObjectIdentifier
            var slot: Int
            var member: ObjectIdentifier
        }
        var first: [Pair: Bool] = [:]
        var last: [Pair: Int] = [:]
        for (index, link) in links.enumerated() {
            let pair = Pair(owner: ObjectIdentifier(link.owner), slot: link.slot, member: ObjectIdentifier(link.member))
            if first[pair] == nil { first[pair] = link.added }
            last[pair] = index
        }
        return links.indices.compactMap { index in
            let link = links[index]
            let pair = Pair(owner: ObjectIdentifier(link.owner), slot: link.slot, member: ObjectIdentifier(link.member))
            // Kept once, where it last changed, if it ends other than it began.
            guard last[pair] == index, first[pair] == link.added else { return nil }
            return link
        }
    }
}
