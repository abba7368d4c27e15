/// The one conversion of integers read from a file into the types the code computes with.
///
/// An integer from disk is a claim, not a fact: a forged or damaged file can put any value in
/// any field. `Int(x)`, `off_t(x)` or `UInt32(x)` of such a value traps when it does not fit;
/// these throw ``StrataError/corrupt(_:offset:)`` instead, naming the field and where it was
/// read (`offset`, when known). Values whose type always fits (a `UInt16` into an `Int`) need
/// no check but go through here too where a decoder turns a field into a count or an index, so
/// that "every integer from disk" has one place.
enum FileInteger {
    /// `value` as an `Int`, or `corrupt`.
    @inline(__always)
    static func int<T: BinaryInteger>(_ value: T, _ what: @autoclosure () -> String, offset: UInt64?) throws -> Int {
        guard let converted = Int(exactly: value) else {
            throw StrataError.corrupt("\(what()) \(value) out of range", offset: offset)
        }
        return converted
    }

    /// `value` as `T`, or `corrupt`.
    @inline(__always)
    static func exactly<T: FixedWidthInteger, S: BinaryInteger>(_ value: S, as type: T.Type,
                                                               _ what: @autoclosure () -> String,
                                                               offset: UInt64?) throws -> T {
        guard let converted = T(exactly: value) else {
            throw StrataError.corrupt("\(what()) \(value) out of range", offset: offset)
        }
        return converted
    }

    /// The largest offset a file can have: positions are signed 64-bit (`off_t`) in the system
    /// calls, so no file holds a byte at 2^63 or beyond.
    static let maxFileOffset = UInt64(Int64.max)
}
