/// Equality and order as predicates see them, which is stricter than ``StoredValue/compare(_:_:)``:
/// values of different kinds never compare (a string is not less than a number, a date is
/// not equal to its seconds), except that int, double and decimal compare by numeric value.
/// `nil` equals only `nil` and is neither less nor greater than anything; NaN equals nothing
/// and does not order.
///
/// Strings order by the Unicode scalars of their NFC forms (``TextOrder``), which is the order
/// of index keys; with `[c]`, `[d]` or `[n]` both sides are already in NFC and compare as bytes.
enum ValueSemantics {
    private enum Kind { case null, bool, number, string, date, uuid, binary }

    private static func kind(_ v: StoredValue) -> Kind {
        switch v {
        case .null: return .null
        case .bool: return .bool
        case .int, .double, .decimal: return .number
        case .string: return .string
        case .date: return .date
        case .uuid: return .uuid
        case .binary: return .binary
        }
    }

    static func equal(_ a: PreparedValue, _ b: PreparedValue, mode: TextMode) -> Bool {
        if let x = a.text, let y = b.text { return mode.equal(x, y) }
        guard kind(a.value) == kind(b.value), !isNaN(a.value), !isNaN(b.value) else { return false }
        return StoredValue.compare(a.value, b.value) == 0
    }

    /// -1, 0 or 1; nil when the two do not order (nil, mismatched kinds, NaN).
    static func order(_ a: PreparedValue, _ b: PreparedValue, mode: TextMode) -> Int? {
        if let x = a.text, let y = b.text { return mode.order(x, y) }
        let k = kind(a.value)
        guard k != .null, k == kind(b.value), !isNaN(a.value), !isNaN(b.value) else { return nil }
        return StoredValue.compare(a.value, b.value)
    }

    private static func isNaN(_ v: StoredValue) -> Bool {
        switch v {
        case .double(let d): return d.isNaN
        case .date(let d): return d.timeIntervalSinceReferenceDate.isNaN
        default: return false
        }
    }
}
