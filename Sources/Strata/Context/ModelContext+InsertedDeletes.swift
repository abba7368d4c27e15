import StrataRecords

// Deleting an inserted object: it never reaches the store, so what the store's delete rules and
// its save would do to other unsaved objects is done here, at once.

extension ModelContext {
    /// An inserted object being deleted never reaches the store, whose delete rules would
    /// cascade from it: its cascade rules run here, deleting what they reach (as a save would
    /// for a saved object), so whether it was saved yet changes nothing.
    func cascadeFromInserted(_ object: ManagedObject, _ binding: EntityBinding) {
        for slot in binding.relationships.indices {
            guard let relationship = binding.relationships[slot], relationship.deleteRule == .cascade,
                  binding.targetEntity[slot] >= 0 else { continue }
            for target in reached(slot: slot, of: object, isToMany: relationship.isToMany)
            where target !== object && target.context === self && !target.isDeleted {
                try? delete(target, preparing: false)
            }
        }
    }

    /// An inserted object being deleted is forgotten: to-ones of other unsaved objects that
    /// name it are cleared now, as the save would store them (only unsaved objects can name a
    /// temporary identity). Left naming it, they read nil but kept an identity that named the
    /// object again if it came back (an undo), without being changes.
    func clearToOnes(naming object: ManagedObject, _ binding: EntityBinding) {
        let raw = object._rawID
        // Only entities with a to-one to its entity can name it: none, and nothing is walked.
        let naming = entitiesNaming[binding.index] ?? {
            let found = container.bindings.filter { other in
                other.targetEntity.indices.contains {
                    other.targetEntity[$0] == binding.index && other.schema.slotKinds[$0] == .toOne
                }
            }.map(\.index)
            entitiesNaming[binding.index] = found
            return found
        }()
        guard !naming.isEmpty else { return }
        for group in [inserted, updated] {
            for (key, pending) in group
            where naming.contains(key.entity) && pending !== object && !pending._values.isEmpty {
                let pendingBinding = container.bindings[key.entity]
                for slot in pendingBinding.targetEntity.indices where pendingBinding.targetEntity[slot] == binding.index
                    && pendingBinding.schema.slotKinds[slot] == .toOne && slot < pending._values.count {
                    if case .int(raw) = pending._values[slot] { setTarget(nil, slot: slot, of: pending) }
                }
            }
        }
    }
}
