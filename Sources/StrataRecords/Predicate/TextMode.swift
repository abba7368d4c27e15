import Foundation

/// How one comparison treats strings, decided once from its options.
///
/// Without options strings compare as Swift strings do: canonically equivalent spellings are
/// equal, `BEGINSWITH`, `ENDSWITH` and `CONTAINS` work on whole characters (grapheme clusters),
/// and order is the order of the NFC forms (``TextOrder``). `[c]`/`[d]` fold both sides with
/// ``TextFolding/fold(_:caseInsensitive:diacriticInsensitive:)``, whose result is NFC, so the
/// folded sides compare as bytes. `[n]` compares the NFC forms as bytes without folding (it
/// supersedes `[c]` and `[d]`, as in Core Data): for text already in NFC that is its bytes as
/// given, the cheap path Core Data's "normalized" names, and for any other text it is still
/// the answer an index of NFC keys gives.
enum TextMode: Sendable, Equatable {
    case standard
    case exact
    case folded(caseInsensitive: Bool, diacriticInsensitive: Bool)

    init(_ options: StringOptions) {
        if options.contains(.normalized) {
            self = .exact
        } else if options.contains(.caseInsensitive) || options.contains(.diacriticInsensitive) {
            self = .folded(caseInsensitive: options.contains(.caseInsensitive),
                           diacriticInsensitive: options.contains(.diacriticInsensitive))
        } else {
            self = .standard
        }
    }

    /// One side as the comparison sees it.
    func prepare(_ text: String) -> String {
        switch self {
        case .standard:
            return text
        case .exact:
            return TextOrder.nfc(text)
        case .folded(let caseInsensitive, let diacriticInsensitive):
            if TextOrder.isASCII(text) {
                // ASCII has no marks and folds by lowercasing: skip the Unicode normalisations,
                // which dominate per-row cost otherwise.
                return caseInsensitive ? text.lowercased() : text
            }
            return TextFolding.fold(text, caseInsensitive: caseInsensitive, diacriticInsensitive: diacriticInsensitive)
        }
    }

    // The operations below take both sides already prepared.

    func equal(_ lhs: String, _ rhs: String) -> Bool {
        if case .standard = self { return lhs == rhs }
        return lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// -1, 0 or 1: the order of the NFC forms.
    func order(_ lhs: String, _ rhs: String) -> Int {
        if case .standard = self { return TextOrder.compare(lhs, rhs) }
        return TextOrder.compareBytes(lhs, rhs)
    }

    func hasPrefix(_ text: String, _ prefix: String) -> Bool {
        if case .standard = self { return text.hasPrefix(prefix) }
        return text.utf8.starts(with: prefix.utf8)
    }

    func hasSuffix(_ text: String, _ suffix: String) -> Bool {
        if case .standard = self { return text.hasSuffix(suffix) }
        return text.utf8.count >= suffix.utf8.count && text.utf8.reversed().starts(with: suffix.utf8.reversed())
    }

    /// An empty substring is contained in everything (Swift's answer, and what a prefix scan
    /// of an index gives for `BEGINSWITH ""`).
    ///
    /// Without options the substring must start on a character boundary and match whole
    /// characters, like `BEGINSWITH` and `ENDSWITH` (a lone U+0301 is not in "e" + U+0301).
    /// Foundation's `String.contains` is not used: on Linux it matches inside characters, and
    /// traps on some strings with NULs ("café\0" containing "\0\0").
    func contains(_ text: String, _ substring: String) -> Bool {
        if substring.isEmpty { return true }
        if case .standard = self {
            if TextOrder.isASCII(text) && TextOrder.isASCII(substring) {
                // ASCII characters are bytes, except that CR LF is one character.
                return Self.find(substring, in: text) { bytes, start, n in
                    !(bytes[start] == 0x0A && start > 0 && bytes[start - 1] == 0x0D)
                        && !(bytes[start + n - 1] == 0x0D && start + n < bytes.count && bytes[start + n] == 0x0A)
                }
            }
            var i = text.startIndex
            while i < text.endIndex {
                if text[i...].starts(with: substring) { return true }
                text.formIndex(after: &i)
            }
            return false
        }
        return Self.find(substring, in: text) { _, _, _ in true }
    }

    /// Whether the bytes of `needle` occur in those of `haystack` at a position `accept`
    /// takes (it gets the haystack's bytes, the position and the needle's length).
    private static func find(_ needle: String, in haystack: String,
                             accept: (UnsafeBufferPointer<UInt8>, Int, Int) -> Bool) -> Bool {
        var haystack = haystack
        var needle = needle
        return haystack.withUTF8 { haystackBytes in
            needle.withUTF8 { needleBytes in
                guard needleBytes.count <= haystackBytes.count, let haystackBase = haystackBytes.baseAddress,
                      let needleBase = needleBytes.baseAddress else { return false }
                let first = needleBytes[0]
                for start in 0...(haystackBytes.count - needleBytes.count) where haystackBytes[start] == first {
                    if memcmp(haystackBase + start, needleBase, needleBytes.count) == 0
                        && accept(haystackBytes, start, needleBytes.count) { return true }
                }
                return false
            }
        }
    }
}
