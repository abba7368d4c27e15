import StrataRecords

// The paths ``CodableAttribute`` reads and writes through: the slot holds the value's JSON
// (`StoredValue(encoding:)`), decoded on every read. Not inlined: a JSON decode dwarfs a call.

extension ManagedObject {
    /// The decoded value of a ``CodableAttribute``; its default when the stored JSON does not
    /// decode (``value(forKey:)`` throws why).
    @usableFromInline
    final func _codableValue<V: Codable>(slot: Int, as type: V.Type) -> V {
        if _isProbe {
            recordProbe(slot: slot)
        } else if let value = try? _persistentValue(slot).decoded(as: V.self) {
            return value
        }
        return codableDefault(slot: slot, as: V.self)
    }

    /// Stores a ``CodableAttribute``'s value. One that cannot be encoded changes nothing: the
    /// context records why, and its next save throws it.
    @usableFromInline
    final func _setCodableValue<V: Codable>(_ value: V, slot: Int) {
        guard slot >= 0 else { return }
        do {
            _setPersistentValue(try StoredValue(encoding: value), slot: slot)
        } catch {
            let failure = StrataError.validation(entity: entityName, property: entitySchema.properties[slot].name,
                                                 reason: "\(error)")
            // In no context yet, the object keeps the failure for the context it joins.
            if let context { context.misuse.append(failure) } else { extras.pendingMisuse.append(failure) }
        }
    }

    /// The declared default of the ``CodableAttribute`` in `slot`. Every such slot has one of
    /// type `V` (its wrapper declared it), so the cast cannot fail.
    private final func codableDefault<V>(slot: Int, as type: V.Type) -> V {
        guard slot >= 0, slot < entitySchema.properties.count,
              case .attribute(let attribute) = entitySchema.properties[slot].kind,
              let fallback = attribute.codableDefault as? V else {
            preconditionFailure("a @CodableAttribute's slot has no default of type \(V.self)")
        }
        return fallback
    }
}
