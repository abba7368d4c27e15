/// Raw access for ``KeyEncoding``: a lookup's key written over the reader's key buffer in
/// place, the probe's bytes copied from the string's contiguous UTF-8.
///
/// Invariants: `key` is resized to exactly the key's length before its bytes are lent, so every
/// write lands inside it: the tag at 0, the string's `count` bytes at `1..<1+count`, and for a
/// whole value the terminator at `count+1` and `count+2`. The string's bytes are lent by the
/// standard library for the closure's duration only and are copied, not kept.
extension KeyEncoding {
    /// Makes `key` exactly the key ``append(_:to:)`` makes for `string` (`terminated`), or a
    /// prefix's key (the same without its terminator), when the string is ASCII without a `00`
    /// byte and fits whole; returns false, `key` unchanged, for any other string (the general
    /// path keys it). The bytes are written over the buffer in place: a run of probes of one
    /// length (codes of one format) resizes nothing, where clearing and appending cost a
    /// range replacement and four appends a probe (decision 99).
    static func setPlainASCIIKey(_ string: String, terminated: Bool, in key: inout [UInt8]) -> Bool {
        let done: Bool? = string.utf8.withContiguousStorageIfAvailable { bytes in
            guard isPlainASCII(bytes) else { return false }
            let count = bytes.count
            let length = count + (terminated ? 3 : 1)
            if key.count > length {
                key.removeLast(key.count - length)
            } else if key.count < length {
                key.append(contentsOf: repeatElement(0, count: length - key.count))
            }
            key.withUnsafeMutableBytes { out in
                out[0] = tagValue
                if count > 0 {
                    UnsafeMutableRawBufferPointer(rebasing: out[1..<(1 + count)])
                        .copyMemory(from: UnsafeRawBufferPointer(bytes))
                }
                if terminated {
                    out[count + 1] = 0
                    out[count + 2] = endWhole
                }
            }
            return true
        }
        return done ?? false
    }
}
