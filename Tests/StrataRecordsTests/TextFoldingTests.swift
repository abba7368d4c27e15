import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

@Suite struct TextFoldingTests {
    @Test func canonicalFoldsCaseAndDiacritics() {
        #expect(TextFolding.canonical("Straße") == "strasse")
        #expect(TextFolding.canonical("Café") == TextFolding.canonical("CAFE"))
        #expect(TextFolding.canonical("Ångström") == "angstrom")
        #expect(TextFolding.canonical("ΣΊΣΥΦΟΣ") == TextFolding.canonical("σίσυφος"))
        #expect(TextFolding.canonical("ﬁle") == "file")
        #expect(TextFolding.canonical("hello") == "hello")
        #expect(TextFolding.canonical("") == "")
        // NFC and NFD spellings of the same text agree.
        #expect(TextFolding.canonical("e\u{301}") == TextFolding.canonical("\u{E9}"))
    }

    /// Latin text takes a table of each scalar's folding (`canonicalLatin`): every scalar below
    /// U+0250 alone, each with random neighbours on both sides, and random Latin text (letters,
    /// digits, spaces, the compatibility characters, the letters that fold to two: ß, ŉ, İ, ǰ)
    /// fold exactly as the general path folds them.
    @Test func latinTextFoldsAsTheGeneralPathDoes() {
        let seed: UInt64 = 0x1A71_4F01
        var rng = SplitMix64(seed: seed)
        func general(_ text: String) -> String { TextFolding.fold(text, caseInsensitive: true, diacriticInsensitive: true) }
        func latin() -> Unicode.Scalar { Unicode.Scalar(UInt32(rng.below(0x250)))! }
        for value in 0..<0x250 {
            let scalar = Unicode.Scalar(UInt32(value))!
            let alone = String(scalar)
            #expect(TextFolding.canonicalLatin(alone) == general(alone), "U+\(String(value, radix: 16))")
            for _ in 0..<4 {
                let text = String(String.UnicodeScalarView([latin(), scalar, latin()]))
                #expect(TextFolding.canonicalLatin(text) == general(text), "seed \(seed): \(text.unicodeScalars.map { $0.value })")
            }
        }
        let special: [Unicode.Scalar] = ["\u{DF}", "\u{149}", "\u{130}", "\u{1F0}", "\u{17F}", "\u{132}", "\u{1C4}", "\u{1C5}", " ", "1"]
        for round in 0..<3_000 {
            let text = String(String.UnicodeScalarView((0..<rng.below(16)).map { _ in
                rng.below(4) == 0 ? special[rng.below(special.count)] : latin()
            }))
            #expect(TextFolding.canonical(text) == general(text), "seed \(seed) round \(round): \(text.unicodeScalars.map { $0.value })")
        }
        // Beyond the table, and combining marks: the general path.
        #expect(TextFolding.canonicalLatin("e\u{301}") == nil && TextFolding.canonicalLatin("Σ") == nil)
        #expect(TextFolding.canonical("Cafe\u{301}") == "cafe" && TextFolding.canonical("ÇAFÉ") == "cafe")
    }

    @Test func lowercaseAndUppercaseAreFullUnicode() {
        #expect(TextFolding.lowercase("ÀÉÎ") == "àéî")
        #expect(TextFolding.uppercase("straße") == "STRASSE")
    }
}

@Suite struct TextCaseRegressionTests {
    /// The stdlib lowercases every capital sigma to σ; Foundation on Apple platforms (ICU's root
    /// locale, and so Core Data's `lowercase:`) gives the final form ς at the end of a word.
    @Test func lowercaseGivesTheFinalSigmaAtTheEndOfAWord() throws {
        #expect(TextFolding.lowercase("ΟΔΟΣ") == "οδος")
        let store = try makeStore(try todoModel())
        let item = try store.write { tx in try tx.insert("Item", ["title": "ΟΔΟΣ"]) }
        #expect(try store.value("lowerTitle", of: item) == .string("οδος"))
    }
}

/// `lowercase:`, `uppercase:` and `canonical:` against Unicode's default case operations as
/// Foundation implements them with ICU's root locale (`lowercased(with: nil)`): on Apple
/// platforms that is Foundation's `lowercased()`, and so Core Data's `lowercase:`.
@Suite struct TextCaseTests {
    /// Letters both sides know: the standard library's Unicode is newer than some platforms'
    /// ICU, which leave letters they do not know unchanged.
    static func known(_ u: Unicode.Scalar) -> Bool {
        guard let age = u.properties.age else { return false }
        return age.major < 15 || (age.major == 15 && age.minor == 0)
    }

    static func scalars(_ s: String) -> [UInt32] { s.unicodeScalars.map(\.value) }

    /// Every cased or case-changing letter, alone and between letters (where Final_Sigma and
    /// other contexts would show), against ICU's root locale.
    @Test func agreesWithTheRootLocaleOnEveryLetter() {
        var checked = 0
        for v in 1...0x1FFFF {
            guard let u = Unicode.Scalar(v), Self.known(u) else { continue }
            let p = u.properties
            guard p.isCased || p.changesWhenLowercased || p.changesWhenUppercased || p.isCaseIgnorable else { continue }
            // A letter whose other case came later (U+A7D3 "ꟓ" gained its capital in Unicode 17).
            let mapped = p.lowercaseMapping + p.uppercaseMapping
            guard mapped.unicodeScalars.allSatisfy(Self.known) else { continue }
            for s in [String(u), "A" + String(u), String(u) + "b", "\u{3A3}" + String(u), "\u{391}" + String(u) + "\u{3A3}", "\u{391}\u{3A3}" + String(u)] {
                #expect(Self.scalars(TextFolding.lowercase(s)) == Self.scalars(s.lowercased(with: nil)), "lowercase of \(Self.scalars(s))")
                #expect(Self.scalars(TextFolding.uppercase(s)) == Self.scalars(s.uppercased(with: nil)), "uppercase of \(Self.scalars(s))")
                checked += 1
            }
        }
        #expect(checked > 10_000)
    }

    /// Seeded random Greek text with marks, punctuation and spaces: sigmas in every position.
    @Test func finalSigmaInRandomText() {
        var rng = SplitMix64(seed: 0x516_3A3)
        let alphabet: [String] = ["\u{3A3}", "\u{3A3}", "\u{391}", "\u{3B1}", "\u{3C3}", "\u{3C2}", " ", ".", "'", "\u{301}",
                                  "\u{345}", "\u{AD}", "A", "1", "-", "\u{2019}", "\u{300}", "\u{1F00}", "\u{130}", "\u{DF}"]
        for _ in 0..<5_000 {
            let s = (0..<(1 + Int(rng.next() % 8))).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }.joined()
            #expect(Self.scalars(TextFolding.lowercase(s)) == Self.scalars(s.lowercased(with: nil)), "lowercase of \(Self.scalars(s))")
        }
    }

    /// The letters whose case depends on a locale: the root locale's answer, never the
    /// Turkish, Azeri, Lithuanian or Greek one.
    @Test func localeSensitiveLetters() {
        let lower: [(String, String)] = [
            ("\u{39F}\u{394}\u{39F}\u{3A3}", "\u{3BF}\u{3B4}\u{3BF}\u{3C2}"),   // ΟΔΟΣ → οδος: final sigma
            ("\u{3A3}", "\u{3C3}"),                                           // alone: not final
            ("\u{3A3}\u{391}\u{3A3} \u{3A3}\u{391}\u{3A3}.", "\u{3C3}\u{3B1}\u{3C2} \u{3C3}\u{3B1}\u{3C2}."),
            ("\u{391}\u{3A3}'\u{391}", "\u{3B1}\u{3C3}'\u{3B1}"),             // a case-ignorable apostrophe inside a word
            ("\u{130}", "i\u{307}"),                                          // İ: i + combining dot (not Turkish "i")
            ("I", "i"),                                                       // not Turkish "ı"
            ("\u{CC}", "\u{EC}"),                                             // Ì: no Lithuanian "i̇̀"
            ("\u{1E9E}", "\u{DF}"),                                           // ẞ → ß
        ]
        for (s, expected) in lower { #expect(Self.scalars(TextFolding.lowercase(s)) == Self.scalars(expected), "lowercase \(s)") }
        let upper: [(String, String)] = [
            ("stra\u{DF}e", "STRASSE"), ("\u{FB01}le", "FILE"), ("\u{149}", "\u{2BC}N"), ("\u{390}", "\u{399}\u{308}\u{301}"),
            ("i", "I"),                                                       // not Turkish "İ"
            ("\u{3AC}\u{3B8}\u{3AE}\u{3BD}\u{3B1}", "\u{386}\u{398}\u{389}\u{39D}\u{391}"),  // Greek accents kept
            ("\u{3C2}", "\u{3A3}"),
        ]
        for (s, expected) in upper { #expect(Self.scalars(TextFolding.uppercase(s)) == Self.scalars(expected), "uppercase \(s)") }
        let canonical: [(String, String)] = [
            ("\u{130}stanbul", "istanbul"), ("\u{131}", "\u{131}"), ("\u{3A3}\u{3C2}\u{3C3}", "\u{3C3}\u{3C3}\u{3C3}"),
            ("\u{1E9E}", "ss"), ("\u{AC00}\u{11A8}", "\u{AC01}"), ("\u{212B}", "a"),
        ]
        for (s, expected) in canonical { #expect(Self.scalars(TextFolding.canonical(s)) == Self.scalars(expected), "canonical \(s)") }
    }

    /// `canonical:` and `[cd]` share the folding: it ignores what `lowercase:` and `uppercase:`
    /// change, its result is in NFC and folds to itself, so a `canonical:` index and a `[cd]`
    /// comparison of the same text always agree.
    @Test func foldingIgnoresCaseTransformsAndIsStable() {
        var rng = SplitMix64(seed: 0xF01D)
        let alphabet: [String] = ["\u{3A3}", "\u{3C2}", "\u{130}", "\u{131}", "\u{DF}", "\u{1E9E}", "\u{FB01}", "\u{149}", "\u{390}",
                                  "e\u{301}", "\u{E9}", "\u{212B}", "\u{AC00}", "\u{11A8}", "\u{1100}\u{1161}", "q\u{307}\u{323}",
                                  "A", "z", " ", "\u{345}", "\u{1F80}", "\u{1FB3}", "\u{1C5}", "\u{1F600}", "\u{0}"]
        for _ in 0..<4_000 {
            let s = (0..<(1 + Int(rng.next() % 6))).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }.joined()
            let c = TextFolding.canonical(s)
            #expect(TextOrder.isNFC(c), "canonical of \(Self.scalars(s)) is not NFC")
            #expect(TextFolding.canonical(c) == c && Self.scalars(TextFolding.canonical(c)) == Self.scalars(c), "canonical of \(Self.scalars(s)) is not stable")
            #expect(Self.scalars(TextFolding.canonical(TextFolding.lowercase(s))) == Self.scalars(c), "lowercase changes canonical of \(Self.scalars(s))")
            #expect(Self.scalars(TextFolding.canonical(s.decomposedStringWithCanonicalMapping)) == Self.scalars(c), "NFD changes canonical of \(Self.scalars(s))")
            let folded = TextFolding.fold(s, caseInsensitive: true, diacriticInsensitive: true)
            #expect(Self.scalars(folded) == Self.scalars(c), "[cd] and canonical: differ on \(Self.scalars(s))")
        }
    }

    /// The same through the store: derived values and a `[cd]` fetch through the
    /// `canonical:` index agree with the transforms.
    @Test func derivedTextAndFoldedFetches() throws {
        let store = try makeStore(try todoModel())
        let names = ["\u{39F}\u{394}\u{39F}\u{3A3}", "\u{3BF}\u{3B4}\u{3BF}\u{3C2}", "\u{130}STANBUL", "Stra\u{DF}e"]
        let lists = try store.write { tx in try names.map { try tx.insert("TodoList", ["name": $0]) } }
        for (id, name) in zip(lists, names) {
            #expect(try store.value("loudName", of: id) == .string(TextFolding.uppercase(name)))
            #expect(try store.value("searchName", of: id) == .string(TextFolding.canonical(name)))
        }
        let greek = FetchRequest("TodoList", predicate: try FetchPredicate(format: "name ==[cd] %@", "\u{3BF}\u{3B4}\u{3BF}\u{3C3}"))
        #expect(try store.read { try $0.fetchPlanDescription(greek) }.contains("searchName"))
        #expect(Set(try store.read { try $0.fetch(greek) }) == [lists[0], lists[1]])
        let dotted = FetchRequest("TodoList", predicate: try FetchPredicate(format: "name BEGINSWITH[cd] %@", "ist"))
        #expect(try store.read { try $0.fetch(dotted) } == [lists[2]])
    }
}
