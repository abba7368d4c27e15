/// A scan's predicate decided in one walk of each stored row: a comparison of a field with a
/// constant (``StoredComparison``), or several joined by AND. Each value the walk passes is
/// skipped by its length alone, and each compared value is compared where it lies; no
/// ``StoredValue``, subject or key path is made for a row.
///
/// The walk goes over every value of the row, as decoding checks them (each must fit in the
/// row), so a damaged row is never taken as matching or not: ``matches(_:)`` answers nil for it,
/// and for a value a comparison cannot decide on its bytes, and the caller asks the general
/// path (``CompiledPredicate`` on a ``RowBytesSubject``), which decides or throws as before.
struct StoredRowFilter: Sendable {
    /// The comparisons, in the order of their fields.
    private let comparisons: [StoredComparison]
    /// Each field's type in the row layout.
    private let types: [AttributeType]

    /// The filter for the AND of `comparisons`, over rows of fields of `types`; nil for none.
    init?(_ comparisons: [StoredComparison], types: [AttributeType]) {
        guard !comparisons.isEmpty, comparisons.allSatisfy({ $0.field < types.count }) else { return nil }
        // A stable order: two comparisons of one field keep the predicate's order.
        self.comparisons = comparisons.enumerated().sorted {
            ($0.element.field, $0.offset) < ($1.element.field, $1.offset)
        }.map(\.element)
        self.types = types
    }

    /// Whether the row `bytes` satisfies every comparison; nil when the general path decides
    /// (a value no comparison can decide on its bytes, or bytes this walk does not take: a
    /// value that does not fit, a field count of more than one byte). The walk checks what
    /// ``RowCodec/skipValue(_:in:)`` checks of each value, which is what the general path's
    /// ``RowCodec/storedValue(ofField:in:fields:)`` checks: each value fits in the row.
    func matches(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        let end = bytes.count
        guard end >= 2, bytes[0] == RowCodec.version else { return nil }
        // The field count, a varint: one byte for any layout of fewer than 128 fields.
        let count = Int(bytes[1])
        guard count < 0x80, count <= types.count else { return nil }
        var at = 2 + (count + 7) / 8
        guard at <= end else { return nil }
        var answer = true
        var next = 0
        var nextField = comparisons[0].field
        for i in 0..<count {
            let present = bytes[2 + i &>> 3] & (1 << UInt8(i & 7)) != 0
            let start = at
            if present {
                switch types[i] {
                case .bool: at += 1
                case .int16, .int32, .int64:
                    // A zigzag varint of at most ten bytes.
                    var taken = 0
                    while true {
                        guard at < end, taken < 10 else { return nil }
                        let byte = bytes[at]
                        at += 1
                        taken += 1
                        if byte < 0x80 { break }
                    }
                case .double, .date: at += 8
                case .decimal:
                    // Sign, exponent, mantissa length, mantissa.
                    guard at + 3 <= end else { return nil }
                    at += 3 + Int(bytes[at + 2])
                case .string, .binary:
                    var length = 0, shift = 0
                    while true {
                        guard at < end, shift < 63 else { return nil }
                        let byte = bytes[at]
                        at += 1
                        length |= Int(byte & 0x7F) << shift
                        if byte < 0x80 { break }
                        shift += 7
                    }
                    guard length <= end else { return nil }
                    at += length
                case .uuid: at += 16
                }
                guard at <= end else { return nil }
            }
            while i == nextField {
                let value = present ? UnsafeRawBufferPointer(rebasing: bytes[start..<at]) : nil
                guard let holds = comparisons[next].evaluate(value) else { return nil }
                answer = answer && holds
                next += 1
                nextField = next < comparisons.count ? comparisons[next].field : -1
            }
        }
        // Fields past the row's count (a row written by a shorter layout) hold no value.
        while next < comparisons.count {
            guard let holds = comparisons[next].evaluate(nil) else { return nil }
            answer = answer && holds
            next += 1
        }
        return answer
    }
}
