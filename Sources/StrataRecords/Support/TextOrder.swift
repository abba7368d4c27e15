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
    /// Whether `s` is ASCII, and so already in NFC (ASCII has no marks or compositions).
    @inline(__always)
    static func isASCII(_ s: String) -> Bool {
        if let ascii = s.utf8.withContiguousStorageIfAvailable({ b in b.allSatisfy { $0 < 0x80 } }) { return ascii }
        return s.utf8.allSatisfy { $0 < 0x80 }
    }

    /// The UTF-8 bytes of `s` in NFC.
    static func nfcBytes(_ s: String) -> [UInt8] {
        isASCII(s) ? Array(s.utf8) : s._nfcCodeUnits
    }

    /// `s` in NFC.
    static func nfc(_ s: String) -> String {
        isASCII(s) ? s : String(decoding: s._nfcCodeUnits, as: UTF8.self)
    }

    /// Whether `s` is in NFC byte for byte.
    static func isNFC(_ s: String) -> Bool {
        isASCII(s) || s.utf8.elementsEqual(s._nfcCodeUnits)
    }

    /// -1, 0 or 1: how `a` orders against `b` by their NFC bytes.
    static func compare(_ a: String, _ b: String) -> Int {
        if isASCII(a) && isASCII(b) { return compareBytes(a, b) }
        return compareBytes(a._nfcCodeUnits, b._nfcCodeUnits)
    }

    /// -1, 0 or 1: how `a` orders against `b` by their bytes as given (both already in NFC, or
    /// compared without normalising).
    static func compareBytes(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { x in b.withUTF8 { y in compareBytes(x, y) } }
    }

    static func compareBytes(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(x.count, y.count)
        if n > 0, let xb = x.baseAddress, let yb = y.baseAddress {
            let c = memcmp(xb, yb, n)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    static func compareBytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        x.withUnsafeBufferPointer { a in y.withUnsafeBufferPointer { b in compareBytes(a, b) } }
    }
}
