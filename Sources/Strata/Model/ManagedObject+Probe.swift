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
    final func probeTarget<T: ManagedObject>(_ storage: AnyKeyPath, _ target: T.Type,
                                             isToMany: Bool) -> [ManagedObject] {
        guard let recorder = recordProbe(storage), !isToMany else { return [] }
        return [ManagedObject.makeProbe(T.self, recorder)]
    }

    /// Records that a probe read the property whose wrapper `storage` reaches.
    @usableFromInline @discardableResult
    final func recordProbe(_ storage: AnyKeyPath) -> ProbeRecorder? {
        let recorder = _extras?.probe
        if let recorder, recorder.muted == 0, let name = EntitySchema.propertyName(ofStorage: storage) {
            recorder.names.append(name)
        }
        return recorder
    }
}
