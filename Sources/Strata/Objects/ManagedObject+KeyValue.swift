import StrataRecords

// The key-based API: properties named by strings, for code that does not know the model class
// (tools, sync, generic editors). Values are the properties' Swift types, boxed: `String` for an
// `@Attribute var title: String`, `Item?` for a to-one, `Set<Item>` or `[Item]` for a to-many.
// Unlike property setters (which cannot throw and record misuse for the next save), these
// throw at once.

extension ManagedObject {
    /// The value of the persistent property named `key` (firing the fault), as the property's
    /// Swift type; nil when the property holds no value.
    ///
    /// Throws `StrataError.invalidArgument` when the class has no persistent property `key`,
    /// and `StrataError.invalidObject` when a ``CodableAttribute``'s stored JSON does not decode
    /// as its type (a store another version of the type wrote; the property reads as its default).
    public final func value(forKey key: String) throws -> Any? {
        let slot = try slot(forKey: key)
        guard case .attribute(let attribute) = entitySchema.properties[slot].kind,
              let strictToSwift = attribute.bridge.strictToSwift else { return dynamicValue(slot: slot) }
        do {
            return try Self.swiftValue(_persistentValue(slot), strictToSwift)
        } catch {
            throw StrataError.invalidObject(entity: entityName, primaryKey: objectID.primaryKey, property: key,
                                            reason: "\(error)")
        }
    }

    /// Sets the persistent property named `key`, as its typed setter does (the change is
    /// saved and is an event: ``changedValuesForCurrentEvent()`` names it). Relationships take
    /// objects of the target class: one (or nil) for a to-one, a `Set` or an array (nil: none) for a to-many.
    ///
    /// An attribute takes a value of its Swift type, or any number it holds exactly (`5` for an
    /// `Int64` or `Double` attribute, `2.0` for an `Int16`, `0.1` for a `Decimal`).
    ///
    /// Throws, changing nothing: `invalidArgument` for an unknown key; `validation` for a value
    /// of another type or a number the attribute cannot hold exactly, nil for a required
    /// attribute, or a derived attribute; `misuse` when the
    /// object is deleted or a related object belongs to another context or is deleted.
    public final func setValue(_ value: Any?, forKey key: String) throws {
        try setDynamicValue(value, slot: slot(forKey: key), isEvent: true)
    }

    /// The value of the persistent property named `key` from the object's own storage (firing
    /// the fault), without notifying anyone of the access. Same values as ``value(forKey:)``.
    public final func primitiveValue(forKey key: String) throws -> Any? {
        try dynamicValue(slot: slot(forKey: key))
    }

    /// Sets the persistent property named `key` without notifying: the change is saved (and
    /// listed by ``changedValues()``), but it is not an event (``changedValuesForCurrentEvent()``
    /// does not name it). For custom accessors and awake hooks that set values silently.
    /// Relationships keep their inverses either way. Throws as ``setValue(_:forKey:)`` does.
    public final func setPrimitiveValue(_ value: Any?, forKey key: String) throws {
        try setDynamicValue(value, slot: slot(forKey: key), isEvent: false)
    }

    // MARK: Internals

    /// The slot of the persistent property `key`.
    final func slot(forKey key: String) throws -> Int {
        guard let slot = entitySchema.slotByName[key] else {
            let known = entitySchema.properties.map(\.name).joined(separator: ", ")
            throw StrataError.invalidArgument("\(entitySchema.name) has no persistent property '\(key)' "
                                              + "(it has: \(known))")
        }
        return slot
    }

    /// The Swift value of the property in `slot`, unwrapped (nil for no value).
    final func dynamicValue(slot: Int) -> Any? {
        let property = entitySchema.properties[slot]
        switch property.kind {
        case .attribute(let attribute): return Self.swiftValue(_persistentValue(slot), attribute.bridge)
        case .derived(let derived): return Self.swiftValue(_persistentValue(slot), derived.bridge)
        case .toOne: return _target(slot: slot)
        case .toMany(let relationship): return relationship.bridge.toSwift(_members(slot: slot))
        }
    }

    /// The Swift value of a stored `value`, unwrapped: nil for `null`.
    static func swiftValue(_ value: StoredValue, _ bridge: ValueBridge) -> Any? {
        swiftValue(value, bridge.toSwift)
    }

    /// ``swiftValue(_:_:)`` through `convert`.
    static func swiftValue(_ value: StoredValue, _ convert: (StoredValue) throws -> Any) rethrows -> Any? {
        if case .null = value { return nil }
        let any = try convert(value)
        if let optional = any as? any OptionalUnwrapping { return optional.unwrappedAny }
        return any
    }

    /// The Swift value of the property in `slot` as a dictionary entry: nil becomes a boxed nil,
    /// so the key stays present.
    final func entryValue(slot: Int) -> Any {
        dynamicValue(slot: slot) ?? (Optional<Any>.none as Any)
    }

    final func setDynamicValue(_ value: Any?, slot: Int, isEvent: Bool) throws {
        let property = entitySchema.properties[slot]
        if isDeleted { throw StrataError.misuse("\(objectID) is deleted: its '\(property.name)' cannot be set") }
        func wrongType(_ expected: String) -> StrataError {
            .validation(entity: entitySchema.name, property: property.name,
                        reason: "expects \(expected), got \(value.map { "a \(type(of: $0))" } ?? "nil")")
        }
        switch property.kind {
        case .derived:
            throw StrataError.validation(entity: entitySchema.name, property: property.name,
                                         reason: "a derived attribute cannot be set")
        case .attribute(let attribute):
            guard let stored = attribute.bridge.fromSwift(value) else {
                let expected = "\(attribute.type)\(attribute.isOptional ? " or nil" : "")"
                if let number = value, ValueBridge.number(number) != nil {
                    throw StrataError.validation(entity: entitySchema.name, property: property.name,
                                                 reason: "expects \(expected), "
                                                     + "got a \(type(of: number)) it cannot hold exactly")
                }
                if let reason = attribute.bridge.whyUnencodable?(value) {
                    throw StrataError.validation(entity: entitySchema.name, property: property.name, reason: reason)
                }
                throw wrongType(expected)
            }
            if let context {
                context.setValue(stored, slot: slot, of: self, isEvent: isEvent)
            } else {
                _setPersistentValue(stored, slot: slot)
            }
        case .toOne(let relationship):
            guard let objects = relationship.bridge.fromSwift(value) else {
                throw wrongType("a \(relationship.target) or nil")
            }
            try checkRelatable(objects)
            _setTarget(objects.first, slot: slot)
        case .toMany(let relationship):
            guard let objects = relationship.bridge.fromSwift(value) else {
                throw wrongType("a Set or an array of \(relationship.target)")
            }
            try checkRelatable(objects)
            _setMembers(objects, slot: slot)
        }
    }

    /// Throws what relating `objects` to this object would record as misuse.
    private func checkRelatable(_ objects: [ManagedObject]) throws {
        let home = context ?? objects.lazy.compactMap(\.context).first
        for object in objects {
            if let objectContext = object.context, objectContext !== home {
                throw StrataError.misuse("\(object.objectID) belongs to another context "
                                         + "and cannot be related to \(objectID)")
            }
            if object.isDeleted {
                throw StrataError.misuse("\(object.objectID) is deleted and cannot be related to \(objectID)")
            }
        }
    }
}

/// Lets a boxed `Optional` of any type be unwrapped.
protocol OptionalUnwrapping {
    var unwrappedAny: Any? { get }
}

extension Optional: OptionalUnwrapping {
    var unwrappedAny: Any? { self.map { $0 as Any } }
}
