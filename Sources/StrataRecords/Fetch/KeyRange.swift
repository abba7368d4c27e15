/// Keys of an index tree from `lower` to `upper` by memcmp, `upper` inclusive as a prefix
/// (every key starting with it is in range; nil: to the end). A struct, not a tuple: arrays of
/// tuples are destroyed through the runtime's generic tuple code.
struct KeyRange: Sendable {
    var lower: [UInt8]
    var upper: [UInt8]?

    init(_ lower: [UInt8], _ upper: [UInt8]?) {
        self.lower = lower
        self.upper = upper
    }

    /// Whether `key`, reached by walking up from ``lower``, lies past the range: above
    /// ``upper`` and not starting with it (``upper`` is inclusive as a prefix).
    @inline(__always)
    func isPast(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let upper else { return false }
        return !key.starts(with: upper) && !key.lexicographicallyPrecedes(upper)
    }
}
