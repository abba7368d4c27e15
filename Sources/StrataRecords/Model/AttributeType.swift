/// The type of a stored attribute.
public enum AttributeType: String, Hashable, Sendable, CaseIterable {
    /// The stored types. `int16`, `int32` and `int64` all hold a ``Value/int(_:)`` bounded by their
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

    /// Whether `value` is a value of this type (`null` is checked separately, by optionality).
    func accepts(_ value: Value) -> Bool {
        switch (self, value) {
        case (.bool, .bool), (.double, .double), (.decimal, .decimal), (.string, .string),
             (.date, .date), (.uuid, .uuid), (.binary, .binary): return true
        case (.int16, .int(let i)), (.int32, .int(let i)), (.int64, .int(let i)): return integerRange!.contains(i)
        default: return false
        }
    }

    /// Converts a value a caller gave into this type where no precision is lost (an `Int` into
    /// a `double` attribute, a whole `double` into an integer), or returns `nil`.
    func coerce(_ value: Value) -> Value? {
        if accepts(value) { return value }
        switch (self, value) {
        case (.double, .int(let i)): return .double(Double(i))
        case (.decimal, .int(let i)): return .decimal(Decimal(i))
        case (.decimal, .double(let d)): return .decimal(Decimal(d))
        case (_, .int), (_, .double), (_, .decimal):
            guard isInteger, let d = value.doubleValue, d.rounded() == d, let r = integerRange,
                  d >= Double(r.lowerBound), d <= Double(r.upperBound) else { return nil }
            return .int(Int64(d))
        default: return nil
        }
    }
}

import Foundation
