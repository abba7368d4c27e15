import StrataRecords

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
        guard names.count == 1,
              entitySchema.slotByName[names[0]] != nil || entitySchema.computed(named: names[0]) != nil else {
            throw StrataError.invalidArgument("\(keyPath) is not one property of \(entitySchema.name) "
                + "(observe a stored, transient, derived or relationship property, or a computed one declared "
                + "with computed(dependsOn:) or cached(dependsOn:))")
        }
        let observer = KeyObserver(key: names[0], options: options, last: current,
                                   evaluate: { ($0 as! Self)[keyPath: keyPath] },
                                   deliver: { object, kind, old, new in
                                       let change = ObservedChange(kind: kind, oldValue: old as? V, newValue: new as? V)
                                       changeHandler(object as! Self, change)
                                   })
        extras.observers.append(observer)
        if options.contains(.initial) {
            changeHandler(self, ObservedChange(kind: .initial, oldValue: nil, newValue: current))
        }
        return ObservationToken { [weak self] in
            observer.isCancelled = true
            self?._extras?.observers.removeAll { $0 === observer }
        }
    }
}
