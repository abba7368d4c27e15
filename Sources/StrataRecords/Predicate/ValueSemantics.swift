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

    private static func kind(_ value: StoredValue) -> Kind {
        switch value {
        case .null: return .null
        case .bool: return .bool
        case .int, .double, .decimal: return .number
        case .string: return .string
        case .date: return .date
        case .uuid: return .uuid
        case .binary: return .binary
        }
    }

    static func equal(_ lhs: PreparedValue, _ rhs: PreparedValue, mode: TextMode) -> Bool {
        if let lhsText = lhs.text, let rhsText = rhs.text { return mode.equal(lhsText, rhsText) }
        guard kind(lhs.value) == kind(rhs.value), !isNaN(lhs.value), !isNaN(rhs.value) else { return false }
        return StoredValue.compare(lhs.value, rhs.value) == 0
    }

    /// -1, 0 or 1; nil when the two do not order (nil, mismatched kinds, NaN).
    static func order(_ lhs: PreparedValue, _ rhs: PreparedValue, mode: TextMode) -> Int? {
        if let lhsText = lhs.text, let rhsText = rhs.text { return mode.order(lhsText, rhsText) }
        let lhsKind = kind(lhs.value)
        guard lhsKind != .null, lhsKind == kind(rhs.value), !isNaN(lhs.value), !isNaN(rhs.value) else { return nil }
        return StoredValue.compare(lhs.value, rhs.value)
    }

    private static func isNaN(_ value: StoredValue) -> Bool {
        switch value {
        case .double(let double): return double.isNaN
        case .date(let date): return date.timeIntervalSinceReferenceDate.isNaN
        default: return false
        }
    }
}
