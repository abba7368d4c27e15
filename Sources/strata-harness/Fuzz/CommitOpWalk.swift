/// The operations of a commit record (FORMAT.md §5) as the tools' surgery needs them: where
/// each op code is and, for a put-overflow, where its 8-byte overflow offset is. Forging and
/// relocating frames both walk records this way; one walk keeps them reading the same format.
enum CommitOpWalk {
    /// A place in a commit record the surgery may change.
    enum Site {
        /// The op code of an operation, at this offset (visited before its operands decode).
        case opCode(Int)
        /// The 8-byte overflow frame offset of a put-overflow, at this offset.
        case overflowReference(Int)
    }

    /// Calls `visit` with each op code and overflow reference in `bytes[start..<end]`, in
    /// order. Stops after the first operation that does not decode (an unknown op, a length
    /// past `end`): damage is the caller's business; the walk never reads outside
    /// `start..<end`.
    static func forEach(in bytes: [UInt8], from start: Int, to end: Int, _ visit: (Site) -> Void) {
        var q = start
        func varint() -> UInt64? {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while q < end, shift < 70 {
                let byte = bytes[q]
                q += 1
                v |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return v }
                shift += 7
            }
            return nil
        }
        /// Skips a length-prefixed field; false when it runs past the end.
        func skipField() -> Bool {
            guard let n = varint(), n <= UInt64(end - q) else { return false }
            q += Int(n)
            return true
        }
        while q < end {
            let op = bytes[q]
            visit(.opCode(q))
            q += 1
            switch op {
            case 1, 2, 3:  // put, delete, put-overflow: tree id, key, then value or reference
                guard varint() != nil, skipField() else { return }
                if op == 1 { guard skipField() else { return } }
                if op == 3 {
                    guard varint() != nil, q + 8 <= end else { return }
                    visit(.overflowReference(q))
                    q += 8
                }
            case 4:  // create tree: id, name
                guard varint() != nil, skipField() else { return }
            case 5:  // drop tree: id
                guard varint() != nil else { return }
            default:
                return
            }
        }
    }
}
