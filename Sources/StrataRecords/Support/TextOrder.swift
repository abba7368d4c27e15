#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the record layer equates and orders strings: by their NFC forms, as UTF-8 bytes (which
/// is Unicode scalar order). Two strings are equal exactly when Swift's `==` calls them equal
/// (canonically equivalent spellings, NFC "é" and NFD "e" + U+0301, are one value), and index
/// keys hold the NFC bytes, so an index, a scan and a sort in memory all give the same answer.
///
/// The NFC is the standard library's own (`String._nfcCodeUnits`, the normalisation behind
/// `String`'s `==` and hashing), not Foundation's: on Linux Foundation's
/// `precomposedStringWithCanonicalMapping` leaves Hangul LV + T unjoined (U+AC00 U+11A8 stays
/// two scalars, the NFC is U+AC01), so it would disagree with `==`. The order is not Swift's
/// `<` on `String` either, which in Swift 6.3 calls NFD "e" + U+0301 not less than "éq" (its
/// NFC "é" is a prefix) and so is not a consistent order to sort or index by.
/// See docs/decisions.md, "String equality and index keys".
enum TextOrder {
    /// Whether `text` is ASCII, and so already in NFC (ASCII has no marks or compositions).
    @inline(__always)
    static func isASCII(_ text: String) -> Bool {
        if let ascii = text.utf8.withContiguousStorageIfAvailable({ bytes in bytes.allSatisfy { $0 < 0x80 } }) {
            return ascii
        }
        return text.utf8.allSatisfy { $0 < 0x80 }
    }

    /// The UTF-8 bytes of `text` in NFC.
    static func nfcBytes(_ text: String) -> [UInt8] {
        isASCII(text) ? Array(text.utf8) : text._nfcCodeUnits
    }

    /// `text` in NFC.
    static func nfc(_ text: String) -> String {
        isASCII(text) ? text : String(decoding: text._nfcCodeUnits, as: UTF8.self)
    }

    /// Whether `text` is in NFC byte for byte.
    static func isNFC(_ text: String) -> Bool {
        isASCII(text) || text.utf8.elementsEqual(text._nfcCodeUnits)
    }

    /// -1, 0 or 1: how `lhs` orders against `rhs` by their NFC bytes.
    static func compare(_ lhs: String, _ rhs: String) -> Int {
        if isASCII(lhs) && isASCII(rhs) { return compareBytes(lhs, rhs) }
        return compareBytes(lhs._nfcCodeUnits, rhs._nfcCodeUnits)
    }

    /// -1, 0 or 1: how `lhs` orders against `rhs` by their bytes as given (both already in NFC,
    /// or compared without normalising).
    static func compareBytes(_ lhs: String, _ rhs: String) -> Int {
        var lhs = lhs, rhs = rhs
        return lhs.withUTF8 { lhsBytes in rhs.withUTF8 { rhsBytes in compareBytes(lhsBytes, rhsBytes) } }
    }

    static func compareBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(lhs.count, rhs.count)
        if n > 0, let lhsBase = lhs.baseAddress, let rhsBase = rhs.baseAddress {
            let order = memcmp(lhsBase, rhsBase, n)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
    }

    static func compareBytes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        lhs.withUnsafeBufferPointer { lhsBuffer in
            rhs.withUnsafeBufferPointer { rhsBuffer in compareBytes(lhsBuffer, rhsBuffer) }
        }
    }
}
