/// Whether a model class overrides ``ManagedObject/validateValue(_:forKey:)``, read from its
/// class metadata's method table (decision 73).
///
/// Why: a save calls `validateValue(_:forKey:)` for every changed property of every object it
/// writes, each value bridged to `Any?` first and found by comparing every slot with its
/// snapshot — a large share of an insert's cost (decision 73) for a method most classes never
/// override. A class that does not override it gets the empty base implementation, so skipping
/// the calls changes nothing. Swift has no public way to ask whether a class overrides a
/// method; docs/architecture.md lists this read with what breaks if the runtime changes.
///
/// How: a class's metadata holds one method-table entry per overridable method, at the same
/// position in every subclass (that is how a call through a `ManagedObject` reference
/// dispatches). Two private classes that override nothing and one that overrides only
/// `validateValue(_:forKey:)` tell which entry it is: the one word where the first two agree
/// and the third differs. A class overrides the method (itself or through an ancestor) exactly
/// when its word there differs from theirs.
///
/// Invariants of the pointer reads: only class metadata is read, from its address point, and
/// only words below `(ClassSize − ClassAddressPoint) / 8`, the metadata's own extent, which its
/// header gives (Swift's class metadata layout without Objective-C interoperation: `ClassSize`
/// at byte 32, `ClassAddressPoint` at byte 36). Where anything is not as expected (another
/// layout, not exactly one differing word) no entry is known and every class counts as
/// overriding: the save then calls the method as before.
enum ValidateValueOverride {
    /// The word index of `validateValue(_:forKey:)`'s method-table entry, from the metadata's
    /// address point; `nil` when it could not be found.
    static let entryIndex: Int? = findEntry()

    /// Whether objects of `type` may run code of their own in `validateValue(_:forKey:)`
    /// (true when that cannot be told).
    static func isOverridden(by type: ManagedObject.Type) -> Bool {
        guard let index = entryIndex, let words = MetadataWords(of: type), index < words.count,
              let plain = MetadataWords(of: PlainA.self) else { return true }
        return words[index] != plain[index]
    }

    private static func findEntry() -> Int? {
        guard let a = MetadataWords(of: PlainA.self), let b = MetadataWords(of: PlainB.self),
              let v = MetadataWords(of: ValidatingV.self), a.count == b.count, a.count == v.count else { return nil }
        let candidates = (0..<a.count).filter { a[$0] == b[$0] && a[$0] != v[$0] }
        return candidates.count == 1 ? candidates[0] : nil
    }

    /// The words of a class's metadata from its address point, bounds-checked.
    private struct MetadataWords {
        private let base: UnsafeRawPointer
        let count: Int

        init?(of type: AnyClass) {
            #if canImport(ObjectiveC)
            // Class metadata carries Objective-C fields before these there: not read.
            return nil
            #else
            let base = unsafeBitCast(type, to: UnsafeRawPointer.self)
            let classSize = Int(base.load(fromByteOffset: 32, as: UInt32.self))
            let addressPoint = Int(base.load(fromByteOffset: 36, as: UInt32.self))
            guard addressPoint >= 0, classSize > addressPoint, classSize < 1 << 20 else { return nil }
            self.base = base
            self.count = (classSize - addressPoint) / MemoryLayout<UInt>.size
            #endif
        }

        subscript(index: Int) -> UInt {
            precondition(index >= 0 && index < count, "a metadata word out of its record")
            return base.load(fromByteOffset: index * MemoryLayout<UInt>.size, as: UInt.self)
        }
    }

    private final class PlainA: ManagedObject {}
    private final class PlainB: ManagedObject {}
    private final class ValidatingV: ManagedObject {
        override func validateValue(_ value: Any?, forKey key: String) throws {}
    }
}
