import Observation
import StrataRecords

// Observation of single properties: key-value observers with old and new values, and Swift
// Observation (`withObservationTracking`, SwiftUI). Both are driven by one path: a change of a
// property "touches" it — and, through the dependency index, every computed property that
// depends on it, on this object or on objects related to it — before the value moves; the
// touched properties are told once the outermost change is over (a setter, a relationship
// change with its inverses, a `coalescingChanges` block, a merge, a rollback).

/// Options of ``ModelObject/observe(_:options:changeHandler:)``.
public struct ObservingOptions: OptionSet, Sendable {
    public let rawValue: UInt8
    /// Creates options from their raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Tell the handler once at once, with the current value (kind `.initial`).
    public static let initial = ObservingOptions(rawValue: 1)
    /// Tell the handler before a change too (kind `.willChange`, with the old value).
    public static let prior = ObservingOptions(rawValue: 2)
}

/// When a property observer is told.
public enum ObservedChangeKind: Sendable, Equatable {
    /// At registration, with ``ObservingOptions/initial``.
    case initial
    /// Before a change, with ``ObservingOptions/prior``: `oldValue` only.
    case willChange
    /// After a change: both values.
    case didChange
}

/// One notification of a property observer.
public struct ObservedChange<Value> {
    /// When the observer is told.
    public let kind: ObservedChangeKind
    /// The value the observer last saw (nil for `.initial`).
    public let oldValue: Value?
    /// The value now (nil for `.willChange`).
    public let newValue: Value?
}

/// Keeps an observation alive: it ends when the token is cancelled or released.
public final class ObservationToken {
    private var onCancel: (() -> Void)?

    init(_ onCancel: @escaping () -> Void) { self.onCancel = onCancel }

    /// Ends the observation (once; later calls do nothing).
    public func cancel() {
        let c = onCancel
        onCancel = nil
        c?()
    }

    deinit { cancel() }
}

extension ModelObject where Self: ManagedObject {
    /// Calls `changeHandler` when the property `keyPath` reads changes: a stored, transient,
    /// derived or relationship property, or a computed one (told when any of its dependencies
    /// changes, through relationships too). Changes come from this object's setters, from
    /// relationships changed on the other side, from merges of other contexts' saves, from
    /// a save that moved derived values, from rollbacks and refreshes. Several changes made in
    /// one ``coalescingChanges(_:)`` block are one notification. For a property of an
    /// `Equatable` type, a change that leaves the value equal is not told.
    ///
    /// Reading the value fires the object's fault. The observation lasts until the token is
    /// cancelled or released. Throws `StrataError.invalidArgument` when `keyPath` is not one
    /// property of the class (a path through a relationship, a plain Swift property).
    public func observe<V>(_ keyPath: KeyPath<Self, V>, options: ObservingOptions = [],
                           changeHandler: @escaping (Self, ObservedChange<V>) -> Void) throws -> ObservationToken {
        let names = KeyPathNames.names(of: keyPath)
        let current = self[keyPath: keyPath]  // registers a computed property on first read
        guard names.count == 1, entitySchema.slotByName[names[0]] != nil || entitySchema.computed(named: names[0]) != nil else {
            throw StrataError.invalidArgument("\(keyPath) is not one property of \(entitySchema.name) "
                + "(observe a stored, transient, derived or relationship property, or a computed one declared with computed(dependsOn:) or cached(dependsOn:))")
        }
        let observer = KeyObserver(key: names[0], options: options, last: current,
                                   evaluate: { ($0 as! Self)[keyPath: keyPath] },
                                   deliver: { object, kind, old, new in
                                       changeHandler(object as! Self, ObservedChange(kind: kind, oldValue: old as? V, newValue: new as? V))
                                   })
        extras.observers.append(observer)
        if options.contains(.initial) { changeHandler(self, ObservedChange(kind: .initial, oldValue: nil, newValue: current)) }
        return ObservationToken { [weak self] in
            observer.isCancelled = true
            self?._extras?.observers.removeAll { $0 === observer }
        }
    }
}

/// A property observer, its type erased.
final class KeyObserver {
    let key: String
    let options: ObservingOptions
    /// The value last told (or read at registration).
    var last: Any
    let evaluate: (ManagedObject) -> Any
    let deliver: (ManagedObject, ObservedChangeKind, Any?, Any?) -> Void
    var isCancelled = false

    init(key: String, options: ObservingOptions, last: Any, evaluate: @escaping (ManagedObject) -> Any,
         deliver: @escaping (ManagedObject, ObservedChangeKind, Any?, Any?) -> Void) {
        self.key = key
        self.options = options
        self.last = last
        self.evaluate = evaluate
        self.deliver = deliver
    }

    func willChange(_ object: ManagedObject) {
        if options.contains(.prior), !isCancelled { deliver(object, .willChange, last, nil) }
    }

    func didChange(_ object: ManagedObject) {
        guard !isCancelled else { return }
        let new = evaluate(object)
        let old = last
        last = new
        if Self.unchanged(old, new) { return }
        deliver(object, .didChange, old, new)
    }

    /// Whether a value observers were told is still what they hold. Attribute values are
    /// compared as change tracking compares them (``StoredValue/isIdentical(to:)``: NaN is NaN, a
    /// differently spelled equivalent string is a change), so a change is told exactly when
    /// `changedValues()` names it; other `Equatable` values (computed properties, objects)
    /// by `==`.
    private static func unchanged(_ old: Any, _ new: Any) -> Bool {
        if let o = old as? any PersistentValue, let n = new as? any PersistentValue {
            return o.storedValue.isIdentical(to: n.storedValue)
        }
        if let e = old as? any Equatable { return equal(e, new) }
        return false
    }

    private static func equal<T: Equatable>(_ a: T, _ b: Any) -> Bool { (b as? T) == a }
}

/// The properties touched by the change in progress, told when it is over.
final class ChangeBatch {
    /// Nesting of changes in progress: the outermost one tells.
    var depth = 0
    private var touched: [(ManagedObject, String)] = []
    private var seen: Set<Touch> = []
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
        if let e = object._extras, !e.observers.isEmpty || !e.cache.isEmpty { return true }
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
        for o in object._extras?.observers ?? [] where o.key == key { o.willChange(object) }
        if object._flags.contains(.observedAccess), let kp = schema.observationKey(of: key) {
            schema.registrar.willSet(object, keyPath: kp)
        }
        for dependent in schema.dependents(of: key) {
            for owner in Self.owners(from: object, through: dependent.hops) { touch(owner, dependent.key) }
        }
    }

    /// Sets `object`'s value in `slot` (an object of `batch`'s context, or of none: nil),
    /// telling Swift Observation and, when the object is watched, the rest once the outermost
    /// change ends. `didSet` runs right after the value moved (the context records the change).
    @inline(__always)
    static func set(_ value: StoredValue, slot: Int, of object: ManagedObject, in batch: ChangeBatch?, didSet: () -> Void = {}) {
        let schema = object.entitySchema
        guard isWatched(object) else {
            // Swift Observation's willSet and didSet hash the key path under the registrar's
            // lock (~190 instructions each, callgrind): skipped for an object whose properties
            // it never saw read, which nothing can be tracking.
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
        // every merged object's values: copies and an array per object cost ~600 instructions).
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
            if kinds[slot] == .toOne { batch.touchInverse(of: object, slot: slot, targets: object._values[slot], values[slot]) }
        }
        object._values = values
        batch.end()
    }

    /// A to-one of `object` moving as a whole (a rollback, a refresh, a merge, a fault) moves
    /// the object out of one target's to-many and into another's: registered targets among
    /// `targets` (raw identifiers) have their inverse touched, so caches over it drop and its
    /// observers hear. An unregistered target holds no cache and no observer.
    func touchInverse(of object: ManagedObject, slot: Int, targets: StoredValue...) {
        guard let context, let b = context.binding(object), b.targetEntity[slot] >= 0, b.inverseSlot[slot] >= 0 else { return }
        let tb = context.container.bindings[b.targetEntity[slot]]
        let inverse = tb.schema.properties[b.inverseSlot[slot]].name
        for case .int(let raw) in targets {
            if let t = context.registry[ModelContext.Key(entity: tb.index, raw: raw)] { touch(t.takeUnretainedValue(), inverse) }
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
                if let e = object._extras {
                    for o in e.observers where o.key == key { o.didChange(object) }
                }
                let schema = object.entitySchema
                if object._flags.contains(.observedAccess), let kp = schema.observationKey(of: key) {
                    schema.registrar.didSet(object, keyPath: kp)
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
            guard let slot = hop.schema.slotByName[hop.relationship], let inverse = hop.schema.inverseName(ofSlot: slot) else { return [] }
            var next: [ManagedObject] = []
            for o in current {
                guard let i = o.entitySchema.slotByName[inverse] else { continue }
                if o.entitySchema.properties[i].isToMany {
                    next += o._members(slot: i, tracking: false)
                } else if let t = o._target(slot: i, tracking: false) {
                    next.append(t)
                }
            }
            current = next
        }
        return current
    }
}

// MARK: Swift Observation

extension ManagedObject: Observable {}

extension ManagedObject {
    /// What Swift Observation tracks for the property `name`: a key path of its own, since
    /// stored properties are reached through their wrappers and computed ones may live in
    /// extensions.
    static func observationKeyPath(_ name: String) -> KeyPath<ManagedObject, Int> {
        \ManagedObject.[_observationKey: name]
    }

    /// Not a property: the subscript `observationKeyPath(_:)` names.
    final subscript(_observationKey name: String) -> Int { 0 }

    /// Tells Swift Observation the property behind `key` was read. One registrar per class
    /// (decision 34): an object of its own would cost four allocations per loaded object
    /// (35% of a fetch that reads every object); a tracked read may then also be woken by the
    /// same property of another object of the class (never missed, sometimes extra).
    @usableFromInline
    final func _trackAccess(_ key: KeyPath<ManagedObject, Int>) {
        _flags.insert(.observedAccess)
        entitySchema.registrar.access(self, keyPath: key)
    }

    /// Tells Swift Observation that the property in `slot` was read. Every reference on the way
    /// is borrowed, none counted: the schema and its key paths live as long as the process, and
    /// the retains and releases of the schema, its key path array and the key path were three
    /// pairs per property read (~120 instructions, callgrind, fetchall).
    @inline(__always)
    final func _trackAccess(slot: Int) {
        _flags.insert(.observedAccess)
        guard let schema = _schemaRef else { return _trackAccess(entitySchema.observationKeys[slot]) }
        schema._withUnsafeGuaranteedRef { s in
            s.observationKeyRefs[slot]._withUnsafeGuaranteedRef { key in s.registrar.access(self, keyPath: key) }
        }
    }
}
