import Foundation

/// The string transforms of derived attributes and of `[c]`/`[d]` comparisons.
///
/// `canonical` is case- and diacritic-insensitive text: Unicode NFD, full case folding (so
/// "Straße" and "STRASSE" agree), combining marks dropped, then NFC. A `canonical:` index
/// answers `BEGINSWITH[cd]` by comparing bytes.
public enum TextFolding {
    /// Lowercases `s`: the `lowercase:` transform of derived attributes.
    public static func lowercase(_ s: String) -> String { s.lowercased() }

    /// Uppercases `s`: the `uppercase:` transform of derived attributes.
    public static func uppercase(_ s: String) -> String { s.uppercased() }

    /// Folds `s` to canonical text (case- and diacritic-insensitive, NFC): the `canonical:` transform,
    /// and what a `canonical:` index stores.
    public static func canonical(_ s: String) -> String {
        if s.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII: folding is lowercasing and there are no marks (the common case, no copies).
            return s.lowercased()
        }
        return fold(s, caseInsensitive: true, diacriticInsensitive: true)
    }

    /// Applies the `[c]` and `[d]` options of a string comparison to one side.
    public static func fold(_ s: String, caseInsensitive: Bool, diacriticInsensitive: Bool) -> String {
        if !caseInsensitive && !diacriticInsensitive { return s }
        var t = s.decomposedStringWithCanonicalMapping
        if caseInsensitive { t = t.folding(options: .caseInsensitive, locale: nil).decomposedStringWithCanonicalMapping }
        if diacriticInsensitive {
            var scalars = String.UnicodeScalarView()
            for u in t.unicodeScalars where u.properties.generalCategory != .nonspacingMark { scalars.append(u) }
            t = String(scalars)
        }
        return t.precomposedStringWithCanonicalMapping
    }
}
