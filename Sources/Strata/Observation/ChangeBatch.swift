import StrataRecords

// Observation of single properties: key-value observers with old and new values, and Swift
// Observation (`withObservationTracking`, SwiftUI). Both are driven by one path: a change of a
// property "touches" it — and, through the dependency index, every computed property that
// depends on it, on this object or on objects related to it — before the value moves; the
// touched properties are told once the outermost change is over (a setter, a relationship
// change with its inverses, a `coalescingChanges` block, a merge, a rollback).

/// The properties touched by the change in progress, told when it is over.
final class ChangeBatch {
    /// Nesting of changes in progress: the outermost one tells. Unchecked (decision 48's rule):
    /// only incremented and decremented, no other code running meanwhile.
    @exclusivity(unchecked) var depth = 0
    // Unchecked as `depth` is: appended to and inserted into (hashing an identity and a name,
    // no other code), swapped out whole before anything is told.
    @exclusivity(unchecked) private var touched: [(ManagedObject, String)] = []
    @exclusivity(unchecked) private var seen: Set<Touch> = []
    /// Where objects-did-change notifications collect (the context owning the batch).
    unowned(unsafe) var context: ModelContext?

    private struct Touch: Hashable {
        let object: ObjectIdentifier
        let key: String
    }

    /// Whether a change of `object` has anyone to tell besides Swift Observation (which every
    /// change tells): its observers or caches, a computed property depending on its class,
    /// its context's observers.
    @inline(__always)
    static func isWatched(_ object: ManagedObject) -> Bool {
        if let extras = object._extras, !extras.observers.isEmpty || !extras.cache.isEmpty { return true }
        if object.entitySchema.hasDependents.load(ordering: .relaxed) { return true }
        return object._context?.hasChangeObservers ?? false
    }

    /// The property `key` of `object` is about to change (or just did, for a to-many changed
    /// through its inverse): computed properties depending on it are touched too, their
    /// cached values dropped.
    func touch(_ object: ManagedObject, _ key: String) {
        guard seen.insert(Touch(object: ObjectIdentifier(object), key: key)).inserted else { return }
        touched.append((object, key))
        let schema = object.entitySchema
        if schema.slotByName[key] == nil {  // a computed property
            object._extras?.cache[key] = nil
            if object.context != nil { object.extras.computedEvents.insert(key) }
        }
        for observer in object._extras?.observers ?? [] where observer.key == key { observer.willChange(object) }
        if object._flags.contains(.observedAccess), let keyPath = schema.observationKey(of: key) {
            schema.registrar.willSet(object, keyPath: keyPath)
        }
        for dependent in schema.dependents(of: key) {
            for owner in Self.owners(from: object, through: dependent.hops) { touch(owner, dependent.key) }
        }
    }

    /// Sets `object`'s value in `slot` (an object of `batch`'s context, or of none: nil),
    /// telling Swift Observation and, when the object is watched, the rest once the outermost
    /// change ends. `didSet` runs right after the value moved (the context records the change).
    @inline(__always)
    static func set(_ value: StoredValue, slot: Int, of object: ManagedObject, in batch: ChangeBatch?,
                    didSet: () -> Void = {}) {
        let schema = object.entitySchema
        guard isWatched(object) else {
            // Swift Observation's willSet and didSet hash the key path under the registrar's
            // lock (decision 55): skipped for an object whose properties it never saw read,
            // which nothing can be tracking.
            let told = object._flags.contains(.observedAccess)
            if told { schema.registrar.willSet(object, keyPath: schema.observationKeys[slot]) }
            object._values[slot] = value
            didSet()
            if told { schema.registrar.didSet(object, keyPath: schema.observationKeys[slot]) }
            return
        }
        let batch = batch ?? ChangeBatch()
        batch.depth += 1
        batch.touch(object, schema.propertyNames[slot])
        object._values[slot] = value
        didSet()
        batch.end()
    }

    /// Replaces `object`'s values as a whole (a merge, a rollback: `values` has one per
    /// slot), telling what changed as ``set(_:slot:of:in:didSet:)`` does.
    static func replace(_ values: [StoredValue], of object: ManagedObject, in batch: ChangeBatch) {
        guard object._values.count == values.count else {
            object._values = values
            return
        }
        let schema = object.entitySchema
        // The slots' kinds and names, not their declarations (a `Property` copied per slot);
        // the values compared in place and the changed slots kept as bits (a merge replaces
        // every merged object's values, so copies and an array per object add up; decision 56).
        let kinds = schema.slotKinds
        var changed = SlotSet()
        var movesToOne = false
        object._values.withUnsafeBufferPointer { old in
            values.withUnsafeBufferPointer { new in
                for slot in 0..<new.count where !StoredValue.identical(old, slot, new, slot) {
                    changed.insert(slot)
                    if kinds[slot] == .toOne { movesToOne = true }
                }
            }
        }
        guard isWatched(object) || movesToOne else {
            let told = object._flags.contains(.observedAccess)
            if told { changed.forEach { schema.registrar.willSet(object, keyPath: schema.observationKeys[$0]) } }
            object._values = values
            if told { changed.forEach { schema.registrar.didSet(object, keyPath: schema.observationKeys[$0]) } }
            return
        }
        batch.depth += 1
        changed.forEach { slot in
            batch.touch(object, schema.propertyNames[slot])
            if kinds[slot] == .toOne {
                batch.touchInverse(of: object, slot: slot, targets: object._values[slot], values[slot])
            }
        }
        object._values = values
        batch.end()
    }

    /// A to-one of `object` moving as a whole (a rollback, a refresh, a merge, a fault) moves
    /// the object out of one target's to-many and into another's: registered targets among
    /// `targets` (raw identifiers) have their inverse touched, so caches over it drop and its
    /// observers hear. An unregistered target holds no cache and no observer.
    func touchInverse(of object: ManagedObject, slot: Int, targets: StoredValue...) {
        guard let context, let binding = context.binding(object), binding.targetEntity[slot] >= 0,
              binding.inverseSlot[slot] >= 0 else { return }
        let targetBinding = context.container.bindings[binding.targetEntity[slot]]
        let inverse = targetBinding.schema.properties[binding.inverseSlot[slot]].name
        for case .int(let raw) in targets {
            if let registered = context.registry[ModelContext.Key(entity: targetBinding.index, raw: raw)] {
                touch(registered.takeUnretainedValue(), inverse)
            }
        }
    }

    /// Ends a change begun with `depth += 1`: the outermost one tells.
    func end() {
        depth -= 1
        if depth == 0 { flush() }
    }

    /// Tells what was touched: observers, Swift Observation, the context's change record.
    func flush() {
        while !touched.isEmpty {
            let list = touched
            touched = []
            seen = []
            for (object, key) in list {
                if let extras = object._extras {
                    for observer in extras.observers where observer.key == key { observer.didChange(object) }
                }
                let schema = object.entitySchema
                if object._flags.contains(.observedAccess), let keyPath = schema.observationKey(of: key) {
                    schema.registrar.didSet(object, keyPath: keyPath)
                }
                context?.recordChange(of: object, key: key)
            }
        }
    }

    /// The objects that reach `object` through `hops` (relationships from the owner's class
    /// to `object`'s), found by walking their inverses back.
    static func owners(from object: ManagedObject, through hops: [Dependent.Hop]) -> [ManagedObject] {
        var current = [object]
        for hop in hops.reversed() {
            guard let slot = hop.schema.slotByName[hop.relationship],
                  let inverse = hop.schema.inverseName(ofSlot: slot) else { return [] }
            var next: [ManagedObject] = []
            for reached in current {
                guard let inverseSlot = reached.entitySchema.slotByName[inverse] else { continue }
                if reached.entitySchema.properties[inverseSlot].isToMany {
                    next += reached._members(slot: inverseSlot, tracking: false)
                } else if let target = reached._target(slot: inverseSlot, tracking: false) {
                    next.append(target)
                }
            }
            current = next
        }
        return current
    }
}
