import Foundation

/// The string transforms of derived attributes (`lowercase:`, `uppercase:`, `canonical:`) and of
/// `[c]`/`[d]` comparisons, the same on every platform.
///
/// They follow Unicode's default, locale-independent case operations, which is what Foundation
/// does on Apple platforms (ICU's root locale) and so what Core Data's `lowercase:` and
/// `uppercase:` give:
///
/// - `lowercase:` is the full lowercase mapping with the one context rule of the root locale,
///   Final_Sigma: a capital sigma that ends a word becomes "ς" ("ΟΔΟΣ" → "οδος", "ΣΑΣ" → "σας";
///   alone or inside a word it is "σ"). "İ" (U+0130) becomes "i" + U+0307 (two scalars).
/// - `uppercase:` is the full uppercase mapping: "ß" → "SS", "ﬁ" → "FI", "ŉ" → "ʼN",
///   "ΐ" → "Ϊ́" (three scalars).
/// - Locale tailorings are never applied: no Turkish or Azeri dotless and dotted i ("I" → "i",
///   "i" → "I"), no Lithuanian dot retention ("Ì" → "ì"), no Greek accent removal in
///   uppercase. A store's derived values do not depend on the process's locale.
/// - `canonical:` is case- and diacritic-insensitive text: canonical decomposition (NFD), full
///   default case folding (so "Straße" and "STRASSE" agree; "Σ", "σ" and "ς" all fold to "σ";
///   "İ" folds to "i" + U+0307, which loses its dot with the other marks, so it meets "i"; the
///   Turkish "ı" has no folding and stays "ı"), nonspacing marks (category Mn) dropped, then the
///   standard library's NFC. A `canonical:` index answers `BEGINSWITH[cd]` by comparing bytes.
///
/// The letters follow the standard library's Unicode tables (Unicode 17 in Swift 6.3); where a
/// platform's ICU is older, Foundation leaves the letters it does not know unchanged (on this
/// project's Linux machine, the 56 cased letters Unicode 17 added). See docs/decisions.md,
/// "`lowercase:`, `uppercase:` and `canonical:`".
public enum TextFolding {
    /// Lowercases `text`: the `lowercase:` transform of derived attributes (see the type's notes).
    public static func lowercase(_ text: String) -> String {
        guard containsCapitalSigma(text) else { return text.lowercased() }
        // Lowercasing has no other context, so the stretches between sigmas lowercase alone.
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var run = String.UnicodeScalarView()
        for (i, scalar) in scalars.enumerated() {
            if scalar == capitalSigma {
                out.append(contentsOf: String(run).lowercased().unicodeScalars)
                run.removeAll(keepingCapacity: true)
                out.append(isFinalSigma(scalars, at: i) ? finalSigma : smallSigma)
            } else {
                run.append(scalar)
            }
        }
        out.append(contentsOf: String(run).lowercased().unicodeScalars)
        return String(out)
    }

    /// Uppercases `text`: the `uppercase:` transform of derived attributes (see the type's notes).
    public static func uppercase(_ text: String) -> String { text.uppercased() }

    /// Folds `text` to canonical text (case- and diacritic-insensitive, NFC): the `canonical:` transform,
    /// and what a `canonical:` index stores.
    public static func canonical(_ text: String) -> String {
        if TextOrder.isASCII(text) {
            // ASCII: folding is lowercasing and there are no marks (the common case, no copies).
            return text.lowercased()
        }
        if let folded = canonicalLatin(text) { return folded }
        return fold(text, caseInsensitive: true, diacriticInsensitive: true)
    }

    /// `canonical(text)` for text whose scalars all lie below U+0250 (ASCII, Latin-1 and the
    /// Latin extensions: accented European text), from a table of each scalar's folding; nil
    /// for any other text. Such text has no combining marks, so folding it is folding each
    /// scalar alone and joining the results: what decomposition leaves of a letter is its base
    /// and marks that the folding drops, so nothing is left to compose across two letters
    /// (`TextFoldingTests` checks every scalar, pairs and random text against ``fold``). It
    /// spares Foundation's three passes over the string (decision 84).
    static func canonicalLatin(_ text: String) -> String? {
        var out = ""
        for scalar in text.unicodeScalars {
            guard scalar.value < 0x250 else { return nil }
            out += latinCanonical[Int(scalar.value)]
        }
        return out
    }

    /// Each scalar below U+0250 folded alone by ``fold`` (computed once, so it follows this
    /// platform's tables as ``fold`` does).
    private static let latinCanonical: [String] = (0..<0x250).map {
        fold(String(Unicode.Scalar(UInt32($0))!), caseInsensitive: true, diacriticInsensitive: true)
    }

    /// Applies the `[c]` and `[d]` options of a string comparison to one side. The result is
    /// in NFC (the standard library's) whenever an option is set.
    public static func fold(_ text: String, caseInsensitive: Bool, diacriticInsensitive: Bool) -> String {
        if !caseInsensitive && !diacriticInsensitive { return text }
        var folded = text.decomposedStringWithCanonicalMapping
        if caseInsensitive {
            folded = folded.folding(options: .caseInsensitive, locale: nil).decomposedStringWithCanonicalMapping
        }
        if diacriticInsensitive {
            var scalars = String.UnicodeScalarView()
            for scalar in folded.unicodeScalars where scalar.properties.generalCategory != .nonspacingMark {
                scalars.append(scalar)
            }
            folded = String(scalars)
        }
        return TextOrder.nfc(folded)
    }

    private static let capitalSigma: Unicode.Scalar = "\u{03A3}"
    private static let smallSigma: Unicode.Scalar = "\u{03C3}"
    private static let finalSigma: Unicode.Scalar = "\u{03C2}"

    /// Whether `text` holds U+03A3 (UTF-8 `CE A3`).
    private static func containsCapitalSigma(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte == 0xA3 && previous == 0xCE { return true }
            previous = byte
        }
        return false
    }

    /// Unicode's Final_Sigma condition (Unicode 3.13, table 3-17), as ICU tests it: a cased
    /// letter before the sigma and none after it, skipping case-ignorable characters (a
    /// character that is both is skipped) on both sides.
    private static func isFinalSigma(_ scalars: [Unicode.Scalar], at i: Int) -> Bool {
        var before = i - 1
        while before >= 0 && scalars[before].properties.isCaseIgnorable { before -= 1 }
        guard before >= 0, scalars[before].properties.isCased else { return false }
        var after = i + 1
        while after < scalars.count && scalars[after].properties.isCaseIgnorable { after += 1 }
        return !(after < scalars.count && scalars[after].properties.isCased)
    }
}
