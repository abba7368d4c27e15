/// Lookup tables a save fills once per object: open addressing with linear probing, sized up
/// front for the objects the save holds (no rehash while it fills), Fibonacci hashing (a
/// multiply by 2^64/φ, the top bits). No removal: a save's tables only grow, then go.
///
/// Why not `Dictionary`/`Set`: each insert and lookup hashes its key with SipHash, costly for
/// a one-word key (decision 50), and a save asks several such questions per object
/// (which identity a temporary identifier got, whether the save wrote an object, what an
/// object held when its `willSave` began). Why not ``RawKeyTable``: it starts empty and
/// doubles as it fills, rehashing every entry each time.
struct KeyTable<Element> {
    private var entries: [(key: Int64, element: Element)?]
    private(set) var count = 0
    private var shift: UInt64

    /// A table that holds `capacity` keys without growing.
    init(capacity: Int = 0) {
        let size = max(8, (max(capacity, 1) * 2 - 1).nextPowerOfTwoOrSelf)
        entries = Array(repeating: nil, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    @inline(__always)
    private func home(_ key: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The element under `key`; setting one adds or replaces it (nil is ignored: no removal).
    subscript(key: Int64) -> Element? {
        get {
            let mask = entries.count - 1
            var i = home(key)
            while let entry = entries[i] {
                if entry.key == key { return entry.element }
                i = (i + 1) & mask
            }
            return nil
        }
        set {
            guard let element = newValue else { return }
            if (count + 1) * 2 > entries.count { grow() }
            let mask = entries.count - 1
            var i = home(key)
            while let entry = entries[i] {
                if entry.key == key {
                    entries[i] = (key, element)
                    return
                }
                i = (i + 1) & mask
            }
            entries[i] = (key, element)
            count += 1
        }
    }

    private mutating func grow() {
        let old = entries
        var bigger = KeyTable(capacity: old.count)
        for case let entry? in old { bigger[entry.key] = entry.element }
        self = bigger
    }
}

private extension Int {
    /// The smallest power of two at or above this (positive) number.
    var nextPowerOfTwoOrSelf: Int { self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount) }
}
