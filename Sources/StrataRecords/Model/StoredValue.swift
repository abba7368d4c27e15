import Foundation

/// One attribute value, as the record layer stores, compares and computes with it.
///
/// Integers of every width are `int` (the attribute's type bounds them); dates are seconds
/// since 2001-01-01 as Foundation counts them. `null` is an absent optional value.
public enum StoredValue: Hashable, Sendable, CustomStringConvertible {
    /// No value: an absent optional value.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer, whatever the attribute's width.
    case int(Int64)
    /// A double-precision floating-point number.
    case double(Double)
    /// A decimal number, with exact base-10 arithmetic.
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// A point in time.
    case date(Date)
    /// A UUID.
    case uuid(UUID)
    /// Raw bytes.
    case binary([UInt8])

    /// Whether this is ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// A short text for messages and debugging: strings quoted, dates as seconds since 2001-01-01,
    /// binaries as their length.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let integer): return String(integer)
        case .double(let double): return String(double)
        case .decimal(let decimal): return decimal.description
        case .string(let string): return "\"\(string)\""
        case .date(let date): return "date(\(date.timeIntervalSinceReferenceDate))"
        case .uuid(let uuid): return uuid.uuidString
        case .binary(let bytes): return "<\(bytes.count) bytes>"
        }
    }

    /// The value as a `Double` when it is a number (or a bool), for mixed comparisons.
    public var doubleValue: Double? {
        switch self {
        case .int(let integer): return Double(integer)
        case .double(let double): return double
        case .decimal(let decimal): return NSDecimalNumber(decimal: decimal).doubleValue
        case .bool(let flag): return flag ? 1 : 0
        case .date(let date): return date.timeIntervalSinceReferenceDate
        default: return nil
        }
    }

    /// Whether setting `other` where `self` is held changes nothing: the one answer to "did
    /// this value change?" that change tracking, willSave rounds, merges, observers, caches and
    /// derivation triggers all use (decision 42).
    ///
    /// - Strings match byte for byte: canonically equivalent spellings (`"é"` precomposed and
    ///   decomposed) are different values, as the row holds the bytes given.
    /// - Numbers compare by value: `0.0` and `-0.0` are identical, and so are decimals of
    ///   different scale (`1.0` and `1.00`); setting one over the other changes nothing, and the
    ///   object keeps the value it held.
    /// - Every NaN is identical to every NaN (double, date or decimal), although `==` calls NaN
    ///   unequal to itself: a NaN set twice is one change, not a change that never settles.
    ///   (Stores refuse NaN; the save names the attribute.)
    /// - Values of different kinds are never identical (`.int(1)` is not `.double(1)`).
    ///
    /// Inlinable: the object layer asks this per slot of every object it saves, and in its
    /// own code the common cases (integers, the same string storage) reduce to a comparison.
    @inlinable
    public func isIdentical(to other: StoredValue) -> Bool {
        switch (self, other) {
        case (.string(let lhs), .string(let rhs)): return Self.sameBytes(lhs, rhs)
        case (.double(let lhs), .double(let rhs)): return lhs == rhs || lhs.isNaN && rhs.isNaN
        case (.date(let lhs), .date(let rhs)):
            let lhsSeconds = lhs.timeIntervalSinceReferenceDate, rhsSeconds = rhs.timeIntervalSinceReferenceDate
            return lhsSeconds == rhsSeconds || lhsSeconds.isNaN && rhsSeconds.isNaN
        case (.decimal(let lhs), .decimal(let rhs)): return Self.identicalDecimals(lhs, rhs)
        case (.null, .null): return true
        case (.bool(let lhs), .bool(let rhs)): return lhs == rhs
        case (.int(let lhs), .int(let rhs)): return lhs == rhs
        case (.uuid(let lhs), .uuid(let rhs)): return lhs == rhs
        case (.binary(let lhs), .binary(let rhs)): return lhs == rhs
        default: return false   // values of different kinds
        }
    }

    /// ``isIdentical(to:)`` of two decimals, out of line: Foundation's `==` normalises both
    /// sides by multiplication, and most decimals compare from their mantissas and exponents
    /// alone (decision 79).
    @usableFromInline
    static func identicalDecimals(_ lhs: Decimal, _ rhs: Decimal) -> Bool {
        if let order = DecimalCoding.fastCompare(lhs, rhs) { return order == 0 }
        return lhs.isNaN ? rhs.isNaN : (!rhs.isNaN && lhs == rhs)
    }

    /// ``isIdentical(to:)`` of two values in place, from their bits first: a value copied from
    /// another (an object's values and its snapshot, a row and the copy a write changed) holds
    /// the very same bits, string storage included, so most comparisons a save makes end with
    /// one `memcmp`, no payload retained. Different bits (or a payload's spare bytes left
    /// different) fall back to the comparison, so the answer is always `isIdentical`'s.
    @inlinable @inline(__always)
    package static func identical(_ lhs: UnsafePointer<StoredValue>, _ rhs: UnsafePointer<StoredValue>) -> Bool {
        memcmp(lhs, rhs, MemoryLayout<StoredValue>.size) == 0 || lhs.pointee.isIdentical(to: rhs.pointee)
    }

    /// ``identical(_:_:)`` of `lhs[i]` and `rhs[j]` (indices checked by the caller).
    @inlinable @inline(__always)
    package static func identical(_ lhs: UnsafeBufferPointer<StoredValue>, _ i: Int,
                                  _ rhs: UnsafeBufferPointer<StoredValue>, _ j: Int) -> Bool {
        identical(lhs.baseAddress! + i, rhs.baseAddress! + j)
    }

    /// Whether two strings hold the same UTF-8 bytes. Every save compares each stored string
    /// with its snapshot (often the very same storage), so this is a length check and one
    /// `memcmp` of the contiguous bytes, not `utf8.elementsEqual` (a generic loop over code
    /// units, far slower per byte; decision 48). A bridged string without contiguous UTF-8
    /// falls back to the loop.
    @inlinable @inline(__always)
    static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        let lhsBytes = lhs.utf8, rhsBytes = rhs.utf8
        let n = lhsBytes.count
        guard n == rhsBytes.count else { return false }
        if n == 0 { return true }
        let same: Bool?? = lhsBytes.withContiguousStorageIfAvailable { lhsBuffer in
            rhsBytes.withContiguousStorageIfAvailable { rhsBuffer in
                lhsBuffer.baseAddress == rhsBuffer.baseAddress
                    || memcmp(lhsBuffer.baseAddress!, rhsBuffer.baseAddress!, n) == 0
            }
        }
        if case .some(.some(let same)) = same { return same }
        return lhsBytes.elementsEqual(rhsBytes)
    }

    /// The string, when this is a ``string(_:)``; otherwise `nil`.
    public var stringValue: String? { if case .string(let string) = self { return string } else { return nil } }

    /// Orders two values the way predicates and sort descriptors do, which is the order of their
    /// index keys: numbers by value across int, double and decimal (NaN after every number);
    /// strings by the Unicode scalars of their NFC forms, so canonically equivalent spellings are
    /// equal (`TextOrder`); `null` before everything. Returns `nil` for values of kinds that
    /// do not compare.
    public static func compare(_ lhs: StoredValue, _ rhs: StoredValue) -> Int? {
        switch (lhs, rhs) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.int(let left), .int(let right)): return left < right ? -1 : (left == right ? 0 : 1)
        case (.decimal(let left), .decimal(let right)):
            if let order = DecimalCoding.fastCompare(left, right) { return order }
            return left < right ? -1 : (left == right ? 0 : 1)
        case (.int(let left), .decimal(let right)): return compare(.decimal(Decimal(left)), .decimal(right))
        case (.decimal(let left), .int(let right)): return compare(.decimal(left), .decimal(Decimal(right)))
        case (.string(let left), .string(let right)): return TextOrder.compare(left, right)
        case (.bool(let left), .bool(let right)): return left == right ? 0 : (left ? 1 : -1)
        case (.date(let left), .date(let right)):
            return compare(.double(left.timeIntervalSinceReferenceDate), .double(right.timeIntervalSinceReferenceDate))
        case (.uuid(let left), .uuid(let right)):
            return withUnsafeBytes(of: left.uuid) { leftBytes in withUnsafeBytes(of: right.uuid) { rightBytes in
                leftBytes.lexicographicallyPrecedes(rightBytes) ? -1 : (leftBytes.elementsEqual(rightBytes) ? 0 : 1) } }
        case (.binary(let left), .binary(let right)):
            return left.lexicographicallyPrecedes(right) ? -1 : (left == right ? 0 : 1)
        default:
            guard let left = lhs.doubleValue, let right = rhs.doubleValue else { return nil }
            if left.isNaN || right.isNaN { return left.isNaN ? (right.isNaN ? 0 : 1) : -1 }
            return left < right ? -1 : (left == right ? 0 : 1)
        }
    }
}
