/// A set of a long constant `IN` list, when its values are all strings or all integers, so
/// that membership costs one lookup instead of a scan.
struct MembershipIndex: Sendable {
    private let strings: Set<String>?
    private let integers: Set<Int64>?

    /// Below this a scan is as fast as hashing.
    private static let minimumCount = 8

    init?(_ elements: [PreparedOperand]) {
        guard elements.count >= Self.minimumCount else { return nil }
        var strings: Set<String> = []
        var integers: Set<Int64> = []
        for element in elements {
            if let text = element.value.text {
                strings.insert(text)
            } else if case .int(let integer) = element.value.value {
                integers.insert(integer)
            } else {
                return nil
            }
        }
        if integers.isEmpty { self.strings = strings; self.integers = nil }
        else if strings.isEmpty { self.strings = nil; self.integers = integers }
        else { return nil }
    }

    /// Whether `value` is in the list; nil when only a scan can tell (a double or decimal
    /// against integers, which compare by numeric value).
    func contains(_ value: PreparedValue) -> Bool? {
        if let strings {
            guard let text = value.text else { return false }
            return strings.contains(text)
        }
        guard let integers else { return nil }
        switch value.value {
        case .int(let integer): return integers.contains(integer)
        case .double, .decimal: return nil
        default: return false
        }
    }
}
