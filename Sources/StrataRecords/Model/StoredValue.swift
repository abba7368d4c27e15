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
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .decimal(let d): return d.description
        case .string(let s): return "\"\(s)\""
        case .date(let d): return "date(\(d.timeIntervalSinceReferenceDate))"
        case .uuid(let u): return u.uuidString
        case .binary(let b): return "<\(b.count) bytes>"
        }
    }

    /// The value as a `Double` when it is a number (or a bool), for mixed comparisons.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .decimal(let d): return NSDecimalNumber(decimal: d).doubleValue
        case .bool(let b): return b ? 1 : 0
        case .date(let d): return d.timeIntervalSinceReferenceDate
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
    /// own code the common cases (integers, the same string storage) are a few instructions.
    @inlinable
    public func isIdentical(to other: StoredValue) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): return Self.sameBytes(a, b)
        case (.double(let a), .double(let b)): return a == b || a.isNaN && b.isNaN
        case (.date(let a), .date(let b)):
            let x = a.timeIntervalSinceReferenceDate, y = b.timeIntervalSinceReferenceDate
            return x == y || x.isNaN && y.isNaN
        case (.decimal(let a), .decimal(let b)): return a.isNaN ? b.isNaN : (!b.isNaN && a == b)
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.binary(let a), .binary(let b)): return a == b
        default: return false   // values of different kinds
        }
    }

    /// ``isIdentical(to:)`` of two values in place, from their bits first: a value copied from
    /// another (an object's values and its snapshot, a row and the copy a write changed) holds
    /// the very same bits, string storage included, so most comparisons a save makes end with
    /// one `memcmp`, no payload retained. Different bits (or a payload's spare bytes left
    /// different) fall back to the comparison, so the answer is always `isIdentical`'s.
    @inlinable @inline(__always)
    package static func identical(_ a: UnsafePointer<StoredValue>, _ b: UnsafePointer<StoredValue>) -> Bool {
        memcmp(a, b, MemoryLayout<StoredValue>.size) == 0 || a.pointee.isIdentical(to: b.pointee)
    }

    /// ``identical(_:_:)`` of `a[i]` and `b[j]` (indices checked by the caller).
    @inlinable @inline(__always)
    package static func identical(_ a: UnsafeBufferPointer<StoredValue>, _ i: Int, _ b: UnsafeBufferPointer<StoredValue>, _ j: Int) -> Bool {
        identical(a.baseAddress! + i, b.baseAddress! + j)
    }

    /// Whether two strings hold the same UTF-8 bytes. Every save compares each stored string
    /// with its snapshot (often the very same storage), so this is a length check and one
    /// `memcmp` of the contiguous bytes, not `utf8.elementsEqual` (a generic loop over code
    /// units: ~1K instructions for a 30-byte title). A bridged string without contiguous UTF-8
    /// falls back to the loop.
    @inlinable @inline(__always)
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        let au = a.utf8, bu = b.utf8
        let n = au.count
        guard n == bu.count else { return false }
        if n == 0 { return true }
        let same: Bool?? = au.withContiguousStorageIfAvailable { pa in
            bu.withContiguousStorageIfAvailable { pb in
                pa.baseAddress == pb.baseAddress || memcmp(pa.baseAddress!, pb.baseAddress!, n) == 0
            }
        }
        if case .some(.some(let same)) = same { return same }
        return au.elementsEqual(bu)
    }

    /// The string, when this is a ``string(_:)``; otherwise `nil`.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// Orders two values the way predicates and sort descriptors do, which is the order of their
    /// index keys: numbers by value across int, double and decimal (NaN after every number);
    /// strings by the Unicode scalars of their NFC forms, so canonically equivalent spellings are
    /// equal (`TextOrder`); `null` before everything. Returns `nil` for values of kinds that
    /// do not compare.
    public static func compare(_ a: StoredValue, _ b: StoredValue) -> Int? {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.decimal(let x), .decimal(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.int(let x), .decimal(let y)): return compare(.decimal(Decimal(x)), .decimal(y))
        case (.decimal(let x), .int(let y)): return compare(.decimal(x), .decimal(Decimal(y)))
        case (.string(let x), .string(let y)): return TextOrder.compare(x, y)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.date(let x), .date(let y)):
            return compare(.double(x.timeIntervalSinceReferenceDate), .double(y.timeIntervalSinceReferenceDate))
        case (.uuid(let x), .uuid(let y)):
            return withUnsafeBytes(of: x.uuid) { px in withUnsafeBytes(of: y.uuid) { py in
                px.lexicographicallyPrecedes(py) ? -1 : (px.elementsEqual(py) ? 0 : 1) } }
        case (.binary(let x), .binary(let y)): return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        default:
            guard let x = a.doubleValue, let y = b.doubleValue else { return nil }
            if x.isNaN || y.isNaN { return x.isNaN ? (y.isNaN ? 0 : 1) : -1 }
            return x < y ? -1 : (x == y ? 0 : 1)
        }
    }
}
