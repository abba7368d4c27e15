/// A value with its string, if it is one, prepared for a comparison's ``TextMode``: done
/// once for a constant side, once per row for the other.
struct PreparedValue: Sendable {
    let value: StoredValue
    let text: String?

    init(_ value: StoredValue, mode: TextMode) {
        self.value = value
        if case .string(let string) = value { text = mode.prepare(string) } else { text = nil }
    }
}
