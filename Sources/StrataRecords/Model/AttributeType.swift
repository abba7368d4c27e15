import Foundation

/// The type of a stored attribute.
public enum AttributeType: String, Hashable, Sendable, CaseIterable {
    /// The stored types. `int16`, `int32` and `int64` all hold a ``StoredValue/int(_:)`` bounded by their
    /// width; `date` is a point in time; `binary` is raw bytes.
    case bool, int16, int32, int64, double, decimal, string, date, uuid, binary

    /// Integer types: sums of them are exact, and overflow is an error at commit.
    public var isInteger: Bool { self == .int16 || self == .int32 || self == .int64 }

    /// Types arithmetic and sums accept.
    public var isNumeric: Bool { isInteger || self == .double || self == .decimal }

    /// The range an integer attribute accepts.
    var integerRange: ClosedRange<Int64>? {
        switch self {
        case .int16: return Int64(Int16.min)...Int64(Int16.max)
        case .int32: return Int64(Int32.min)...Int64(Int32.max)
        case .int64: return Int64.min...Int64.max
        default: return nil
        }
    }

    /// Whether `value` is a value of this type that the store keeps: integers within the
    /// type's width, finite doubles and dates, decimals that are numbers (`null` is checked
    /// separately, by optionality). NaN and the infinities are refused, because sums, averages,
    /// indexes and comparisons have no exact answer for them.
    package func accepts(_ value: StoredValue) -> Bool {
        switch (self, value) {
        case (.bool, .bool), (.string, .string), (.uuid, .uuid), (.binary, .binary): return true
        case (.double, .double(let double)): return double.isFinite
        case (.date, .date(let date)): return date.timeIntervalSinceReferenceDate.isFinite
        case (.decimal, .decimal(let decimal)): return !decimal.isNaN
        case (.int16, .int(let integer)), (.int32, .int(let integer)), (.int64, .int(let integer)):
            return integerRange!.contains(integer)
        default: return false
        }
    }

    /// Converts a value a caller gave into this type when the conversion is exact (converting
    /// back gives the value given): an `Int` into a `double` attribute up to 2^53, a whole
    /// `double` or `decimal` into an integer within its width, a `double` into a `decimal` as
    /// its shortest round-trip digits (`0.1` is 0.1), a decimal into a `double` when the double
    /// holds it exactly. Returns `nil` for anything else, and for values ``accepts(_:)`` refuses.
    package func coerce(_ value: StoredValue) -> StoredValue? {
        if accepts(value) { return value }
        let converted: StoredValue?
        switch (self, value) {
        case (.double, .int(let integer)):
            let double = Double(integer)
            converted = Int64(exactly: double) == integer ? .double(double) : nil
        case (.double, .decimal(let decimal)):
            converted = ExactConversion.double(decimal).map(StoredValue.double)
        case (.decimal, .int(let integer)):
            converted = .decimal(Decimal(integer))
        case (.decimal, .double(let double)):
            converted = ExactConversion.decimal(double).map(StoredValue.decimal)
        case (.int16, .double(let double)), (.int32, .double(let double)), (.int64, .double(let double)):
            converted = Int64(exactly: double).map(StoredValue.int)
        case (.int16, .decimal(let decimal)), (.int32, .decimal(let decimal)), (.int64, .decimal(let decimal)):
            converted = ExactConversion.integer(decimal).map(StoredValue.int)
        default:
            converted = nil
        }
        guard let converted, accepts(converted) else { return nil }
        return converted
    }
}
