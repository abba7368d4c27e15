import Foundation
import StrataRecords

/// Values of every attribute type drawn from small pools, so uniqueness collides, rules both
/// pass and fail, and integers sometimes overflow their width.
package enum RandomValues {
    /// Strings: some match each of ``RandomModel/patterns``, some are long, one ends in 7.
    package static let strings = ["abc", "ABC-12", "abab", "ab, cd", "x, maxi", "", "Zürich", "x y", "STRASSE",
                                  "straße", String(repeating: "long", count: 6), "a7", "Ωmega"]

    /// Whether an attribute of `type` holds `value` (integers within its width).
    package static func fits(_ value: StoredValue, _ type: AttributeType) -> Bool {
        guard case .int(let integer) = value else { return true }
        switch type {
        case .int16: return Int16(exactly: integer) != nil
        case .int32: return Int32(exactly: integer) != nil
        default: return true
        }
    }

    /// A value of `type` (never `null`).
    package static func value(_ type: AttributeType, _ rng: inout SplitMix64) -> StoredValue {
        func pick<T>(_ choices: [T]) -> T { choices[rng.below(choices.count)] }
        switch type {
        case .bool: return .bool(rng.chance(0.5))
        case .int16, .int32, .int64:
            return .int(pick([-1, 0, 1, 2, 3, 7, 10, 11, 100, 32_767, 40_000, -40_000, 3_000_000_000]))
        case .double: return .double(pick([0, 0.5, -1.25, 3, 1e10, 0.1, 2.5]))
        case .decimal:
            return .decimal(Decimal(string: pick(["0", "1.5", "-2.25", "10", "0.1", "99.99"]),
                                    locale: Locale(identifier: "en_US_POSIX"))!)
        case .string: return .string(pick(strings))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: pick([0, 86_400, -1e6, 1.5, 7])))
        case .uuid:
            return .uuid(UUID(uuidString: pick(["E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                                                "00000000-0000-0000-0000-000000000001",
                                                "C0FFEE00-0000-4000-8000-000000000007"]))!)
        case .binary: return .binary(pick([[], [0], [1, 2, 3], [255, 255, 255, 255, 255]]))
        }
    }
}
