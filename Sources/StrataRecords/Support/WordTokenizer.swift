/// The words of a text as a word index keeps them (``FullTextIndex``; FORMAT.md §12, "Word
/// indexes"): Unicode word boundaries, each word folded as `canonical:` folds it.
///
/// The boundaries follow UAX #29's default rules for the cases that decide words in running
/// text: a word is a run of letters and digits (letters and digits join: `mp3`, `x86`), with a
/// mark, `_` or a joiner inside it; an apostrophe, a right single quotation mark, a full stop or
/// a middle dot between two letters, and a full stop, comma or apostrophe between two digits,
/// stay inside it (`don't`, `e.g`, `3.14`, `1,000`); every ideograph and every hiragana letter
/// is a word of its own (UAX #29 does not join them; a dictionary would), katakana runs join.
/// Everything else separates words. Not done: dictionary segmentation of Thai, Lao, Khmer and
/// Myanmar (a run of them is one word), emoji sequences (not words).
enum WordTokenizer {
    /// What a character is to the word rules.
    private enum Kind {
        case letter, digit, katakana, single, midLetter, midNumber, midBoth, joiner, other
    }

    /// The longest word kept, in UTF-8 bytes of its folded form: a longer one is cut at the
    /// last whole character before it (index keys have a bounded size).
    static let maximumWordBytes = 200

    /// The folded words of `text`, in order, repeats kept.
    static func words(_ text: String) -> [String] {
        var out: [String] = []
        forEachWord(text) { out.append($0) }
        return out
    }

    /// Calls `body` with each folded word of `text`, in order.
    static func forEachWord(_ text: String, _ body: (String) -> Void) {
        let characters = Array(text)
        var kinds = characters.map(kind)
        var start: Int?
        var i = 0
        func finish(_ end: Int) {
            if let s = start {
                body(fold(String(characters[s..<end])))
                start = nil
            }
        }
        while i < characters.count {
            let k = kinds[i]
            switch k {
            case .letter, .digit, .katakana:
                if start != nil, !joins(kinds[i - 1], k) { finish(i) }
                if start == nil { start = i }
            case .joiner:
                if start == nil { break }
            case .single:
                finish(i)
                body(fold(String(characters[i])))
            case .midLetter, .midNumber, .midBoth:
                if start != nil, i + 1 < characters.count {
                    let before = kinds[i - 1], after = kinds[i + 1]
                    let betweenLetters = before == .letter && after == .letter && k != .midNumber
                    let betweenDigits = before == .digit && after == .digit && k != .midLetter
                    if betweenLetters || betweenDigits {
                        kinds[i] = before  // inside the word: the next character joins it
                        break
                    }
                }
                finish(i)
            case .other:
                finish(i)
            }
            i += 1
        }
        finish(characters.count)
    }

    /// Whether a character of kind `next` continues a word whose last character is `previous`.
    private static func joins(_ previous: Kind, _ next: Kind) -> Bool {
        switch (previous, next) {
        case (.katakana, .katakana): return true
        case (.katakana, _), (_, .katakana): return false
        default: return true  // letters, digits, and the joiners and mid characters inside
        }
    }

    private static func kind(_ character: Character) -> Kind {
        guard let scalar = character.unicodeScalars.first else { return .other }
        switch scalar.value {
        case 0x27, 0x2E: return .midBoth  // ' .
        case 0x2019, 0xB7, 0x2027: return .midLetter  // ’ · ‧
        case 0x2C, 0x3B: return .midNumber  // , ;
        case 0x5F, 0x200D: return .joiner  // _ ZWJ
        default: break
        }
        let properties = scalar.properties
        if properties.isIdeographic { return .single }
        switch properties.generalCategory {
        case .decimalNumber, .letterNumber, .otherNumber: return .digit
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter:
            if (0x3040...0x309F).contains(scalar.value) { return .single }  // hiragana
            if (0x30A0...0x30FF).contains(scalar.value) || (0x31F0...0x31FF).contains(scalar.value) { return .katakana }
            return .letter
        case .nonspacingMark, .spacingMark, .enclosingMark: return .letter  // a mark that begins a cluster
        case .connectorPunctuation: return .joiner
        default: return .other
        }
    }

    /// `canonical:` folding of one word, cut to ``maximumWordBytes``.
    static func fold(_ word: String) -> String {
        let folded = TextFolding.canonical(word)
        guard folded.utf8.count > maximumWordBytes else { return folded }
        var cut = ""
        var bytes = 0
        for character in folded {
            let size = character.utf8.count
            if bytes + size > maximumWordBytes { break }
            cut.append(character)
            bytes += size
        }
        return cut
    }
}
