extension ManagedObject {
    /// The name of the relationship `keyPath` reads, found by reading it on a probe prototype.
    static func probeName<Root: ManagedObject, Inverse>(of keyPath: KeyPath<Root, Inverse>) -> String? {
        probePath(of: keyPath).first
    }

    /// The persistent property names `keyPath` reads, in order (`\Item.list?.name`: `list`,
    /// `name`), found by reading it on a probe prototype.
    static func probePath<Root: ManagedObject>(of keyPath: PartialKeyPath<Root>) -> [String] {
        let recorder = ProbeRecorder()
        _ = makeProbe(Root.self, recorder)[keyPath: keyPath]
        return recorder.names
    }

    static func makeProbe<T: ManagedObject>(_ type: T.Type, _ recorder: ProbeRecorder) -> T {
        let prototype = T()
        prototype._flags.insert(.probe)
        prototype.extras.probe = recorder
        return prototype
    }

    /// A probe's to-one read: records the name and gives a probe of the target (none for a
    /// to-many, which ends a chain).
    @usableFromInline
    final func probeTarget<T: ManagedObject>(slot: Int, _ target: T.Type, isToMany: Bool) -> [ManagedObject] {
        guard let recorder = recordProbe(slot: slot), !isToMany else { return [] }
        return [ManagedObject.makeProbe(T.self, recorder)]
    }

    /// Records that a probe read the property in `slot`.
    @discardableResult
    final func recordProbe(slot: Int) -> ProbeRecorder? {
        let recorder = _extras?.probe
        if let recorder, recorder.muted == 0, slot >= 0, slot < entitySchema.properties.count {
            recorder.names.append(entitySchema.properties[slot].name)
        }
        return recorder
    }
}

/// The property names reads of probe prototypes reported, in order.
@usableFromInline
final class ProbeRecorder {
    var names: [String] = []
    /// Above 0 while a computed property's body runs on the probe (its reads are not the path's).
    var muted = 0
    /// What is wrong with the dependencies of computed properties the probe read.
    var problems: [String] = []
}
