import Foundation

/// How one comparison treats strings, decided once from its options.
///
/// Without options strings compare as Swift strings do (canonically equivalent spellings are
/// equal). `[c]`/`[d]` fold both sides with ``TextFolding/fold(_:caseInsensitive:diacriticInsensitive:)``,
/// whose result is NFC, so the folded sides compare as bytes. `[n]` says the values are
/// already canonical: bytes as given, and it supersedes `[c]` and `[d]` as in Core Data.
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
    func prepare(_ s: String) -> String {
        guard case .folded(let c, let d) = self else { return s }
        if s.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII has no marks and folds by lowercasing: skip the Unicode normalisations,
            // which dominate per-row cost otherwise.
            return c ? s.lowercased() : s
        }
        return TextFolding.fold(s, caseInsensitive: c, diacriticInsensitive: d)
    }

    // The operations below take both sides already prepared.

    func equal(_ a: String, _ b: String) -> Bool {
        if case .standard = self { return a == b }
        return a.utf8.elementsEqual(b.utf8)
    }

    func hasPrefix(_ s: String, _ prefix: String) -> Bool {
        if case .standard = self { return s.hasPrefix(prefix) }
        return s.utf8.starts(with: prefix.utf8)
    }

    func hasSuffix(_ s: String, _ suffix: String) -> Bool {
        if case .standard = self { return s.hasSuffix(suffix) }
        return s.utf8.count >= suffix.utf8.count && s.utf8.reversed().starts(with: suffix.utf8.reversed())
    }

    /// An empty substring is contained in everything (Swift's answer, and what a prefix scan
    /// of an index gives for `BEGINSWITH ""`).
    func contains(_ s: String, _ substring: String) -> Bool {
        if substring.isEmpty { return true }
        if case .standard = self { return s.contains(substring) }
        var haystack = s
        var needle = substring
        return haystack.withUTF8 { h in
            needle.withUTF8 { n in
                guard n.count <= h.count, let hb = h.baseAddress, let nb = n.baseAddress else { return false }
                let first = n[0]
                for start in 0...(h.count - n.count) where h[start] == first {
                    if memcmp(hb + start, nb, n.count) == 0 { return true }
                }
                return false
            }
        }
    }
}

/// A value with its string, if it is one, prepared for a comparison's ``TextMode``: done
/// once for a constant side, once per row for the other.
struct PreparedValue: Sendable {
    let value: Value
    let text: String?

    init(_ value: Value, mode: TextMode) {
        self.value = value
        if case .string(let s) = value { text = mode.prepare(s) } else { text = nil }
    }
}
