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
    /// value that does not fit, a field count of more than one byte). The walk
    /// (``RowCodec/quickValueEnd(_:in:at:)``) checks what ``RowCodec/skipValue(_:in:)`` checks
    /// of each value, which is what the general path's
    /// ``RowCodec/storedValue(ofField:in:fields:)`` checks: each value fits in the row.
    func matches(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        guard let count = RowCodec.quickFieldCount(bytes, layout: types.count) else { return nil }
        if comparisons.count == 1 { return matchesOne(bytes, count: count) }
        var at = RowCodec.quickValuesStart(count: count)
        var answer = true
        var next = 0
        var nextField = comparisons[0].field
        for i in 0..<count {
            let present = RowCodec.quickIsPresent(i, in: bytes)
            let start = at
            if present {
                guard let end = RowCodec.quickValueEnd(types[i], in: bytes, at: at) else { return nil }
                at = end
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

    /// ``matches(_:)`` for one comparison (the common filter): the walk only notes where the
    /// compared value lies, and the comparison runs once after it.
    private func matchesOne(_ bytes: UnsafeRawBufferPointer, count: Int) -> Bool? {
        let field = comparisons[0].field
        var at = RowCodec.quickValuesStart(count: count)
        var valueStart = 0, valueEnd = -1
        for i in 0..<count {
            let start = at
            if RowCodec.quickIsPresent(i, in: bytes) {
                guard let end = RowCodec.quickValueEnd(types[i], in: bytes, at: at) else { return nil }
                at = end
                if i == field { valueStart = start; valueEnd = end }
            }
        }
        return comparisons[0].evaluate(valueEnd < 0 ? nil : UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueEnd]))
    }
}
