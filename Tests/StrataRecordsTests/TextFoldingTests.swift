import Testing
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

    @Test func lowercaseAndUppercaseAreFullUnicode() {
        #expect(TextFolding.lowercase("ÀÉÎ") == "àéî")
        #expect(TextFolding.uppercase("straße") == "STRASSE")
    }
}
