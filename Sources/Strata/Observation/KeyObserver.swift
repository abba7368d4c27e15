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
        if let oldValue = old as? any PersistentValue, let newValue = new as? any PersistentValue {
            return oldValue.storedValue.isIdentical(to: newValue.storedValue)
        }
        if let equatable = old as? any Equatable { return equal(equatable, new) }
        return false
    }

    private static func equal<T: Equatable>(_ lhs: T, _ rhs: Any) -> Bool { (rhs as? T) == lhs }
}
