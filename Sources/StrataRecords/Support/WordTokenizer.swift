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
///
/// Scalars, not characters, are classified (a grapheme break per character costs more than the
/// rest of the work): a mark continues the word before it, as it would stay in its cluster.
enum WordTokenizer {
    /// What a scalar is to the word rules.
    enum Kind {
        case letter, digit, katakana, single, midLetter, midNumber, midBoth, joiner, mark, other
    }

    /// The longest word kept, in UTF-8 bytes of its folded form: a longer one is cut at the
    /// last whole character before it (index keys have a bounded size).
    static let maximumWordBytes = 200

    /// The folded words of `text`, in order, repeats kept.
    static func words(_ text: String) -> [String] {
        var out: [String] = []
        let folding = WordFolding()
        forEachWord(text, folding: folding) { out.append($0) }
        return out
    }

    /// Calls `body` with each folded word of `text`, in order (`folding` remembers the forms of
    /// words it folded before). ASCII text is split on its UTF-8 bytes and folded by lowercasing
    /// them (what `canonical:` does to ASCII), with no scalar array and no memory lookup.
    static func forEachWord(_ text: String, folding: WordFolding, _ body: (String) -> Void) {
        forEachWord(text, ascii: body) { body(folding.fold($0)) }
    }

    /// Calls `ascii` with each word of ASCII letters and digits, lowercased, and `other` with
    /// the raw scalars of each other word, in order: the caller folds those (``WordFolding``),
    /// or finds what it made of them before without folding again.
    static func forEachWord(_ text: String, ascii: (String) -> Void, other: (ArraySlice<Unicode.Scalar>) -> Void) {
        var text = text
        let done: Bool? = text.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            let kinds = latinKinds
            segment(bytes, kindOf: { kinds[Int($0)] }) { range in ascii(lowercasedASCII(bytes, range)) }
            return true
        }
        if done == true { return }
        // One pass over the scalars (`Array(_:)` of the view counts them first, then copies).
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars { scalars.append(scalar) }
        forEachWord(scalars: scalars, ascii: ascii, other: other)
    }

    /// The general path: every scalar classified; a word of ASCII scalars only (most words, in
    /// most text that is not all ASCII) is lowercased as the ASCII path does.
    static func forEachWord(scalars: [Unicode.Scalar], folding: WordFolding, _ body: (String) -> Void) {
        forEachWord(scalars: scalars, ascii: body) { body(folding.fold($0)) }
    }

    private static func forEachWord(scalars: [Unicode.Scalar], ascii: (String) -> Void,
                                    other: (ArraySlice<Unicode.Scalar>) -> Void) {
        // The table read once: a `static let` read per scalar is a lazy-initialization check
        // (`swift_once`) per scalar.
        let kinds = latinKinds
        segment(scalars, kindOf: { $0.value < 0x250 ? kinds[Int($0.value)] : classify($0) }) { range in
            if scalars[range].allSatisfy({ $0.value < 0x80 }) {
                ascii(lowercasedASCII(scalars, range))
            } else {
                other(scalars[range])
            }
        }
    }

    /// The word rules over `units` (scalars, or ASCII bytes): calls `word` with each word's range.
    static func segment<C: RandomAccessCollection>(_ units: C, kindOf: (C.Element) -> Kind,
                                                           word: (Range<Int>) -> Void) where C.Index == Int {
        segment(from: units.startIndex, to: units.endIndex, unit: { (kindOf(units[$0]), $0 + 1) }, word: word)
    }

    /// The word rules over the units from `begin` to `end`, one implementation for every kind of
    /// unit: `unit(i)` gives the kind of the unit starting at `i` and where the next one starts
    /// (one position later for scalars and ASCII bytes, one or two for Latin UTF-8); `word` is
    /// called with each word's range of positions.
    @inline(__always)
    static func segment(from begin: Int, to end: Int, unit: (Int) -> (kind: Kind, next: Int),
                        word: (Range<Int>) -> Void) {
        var start: Int?
        var last = Kind.other  // the kind of the word's last letter-like unit
        func finish(_ end: Int) {
            if let s = start {
                word(s..<end)
                start = nil
            }
        }
        var i = begin
        while i < end {
            let (k, next) = unit(i)
            switch k {
            case .letter, .digit, .katakana:
                if start != nil, !joins(last, k) { finish(i) }
                if start == nil { start = i }
                last = k
            case .joiner, .mark:
                break  // inside a word it stays; outside one it is nothing
            case .single:
                finish(i)
                word(i..<next)
            case .midLetter, .midNumber, .midBoth:
                if start != nil, next < end {
                    let after = unit(next).kind
                    let betweenLetters = last == .letter && after == .letter && k != .midNumber
                    let betweenDigits = last == .digit && after == .digit && k != .midLetter
                    if betweenLetters || betweenDigits { break }
                }
                finish(i)
            case .other:
                finish(i)
            }
            i = next
        }
        finish(end)
    }

    /// The ASCII word at `range` of `units` (bytes, or scalars below 0x80), lowercased and cut
    /// to ``maximumWordBytes``: one spelling for both paths.
    static func lowercasedASCII<C: RandomAccessCollection>(_ units: C, _ range: Range<Int>) -> String
    where C.Index == Int, C.Element: ASCIIUnit {
        let count = min(range.count, maximumWordBytes)
        return String(unsafeUninitializedCapacity: count) { out in
            for j in 0..<count {
                let byte = units[range.lowerBound + j].asciiByte
                out[j] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            }
            return count
        }
    }

    /// The folded form of a word the Latin path found (``forEachLatinWord(_:_:)``), as the other
    /// paths fold it: an ASCII word lowercased and cut, any other folded by `canonical:` and cut.
    static func foldedLatinWord(_ spelling: UnsafeBufferPointer<UInt8>) -> String {
        if spelling.allSatisfy({ $0 < 0x80 }) { return lowercasedASCII(spelling, 0..<spelling.count) }
        return WordFolding.fold(String(decoding: spelling, as: UTF8.self))
    }

    /// Whether a scalar of kind `next` continues a word whose last letter or digit is `previous`.
    private static func joins(_ previous: Kind, _ next: Kind) -> Bool {
        (previous == .katakana) == (next == .katakana)
    }

    /// The kinds of the scalars below U+0250 (ASCII, Latin-1 and the Latin extensions: the
    /// accented letters of most European text), looked up instead of asking the scalar's
    /// Unicode properties, two table searches in the standard library (decision 82).
    static let latinKinds: [Kind] = (0..<0x250).map { classify(Unicode.Scalar(UInt32($0))!) }

    static func kind(_ scalar: Unicode.Scalar) -> Kind {
        let value = scalar.value
        if value < 0x250 { return latinKinds[Int(value)] }
        return classify(scalar)
    }

    private static func classify(_ scalar: Unicode.Scalar) -> Kind {
        let value = scalar.value
        if value < 0x80 {
            switch value {
            case 0x30...0x39: return .digit
            case 0x41...0x5A, 0x61...0x7A: return .letter
            case 0x27, 0x2E: return .midBoth  // ' .
            case 0x2C, 0x3B: return .midNumber  // , ;
            case 0x5F: return .joiner  // _
            default: return .other
            }
        }
        switch value {
        case 0x2019, 0xB7, 0x2027: return .midLetter  // ’ · ‧
        case 0x200D: return .joiner  // ZWJ
        default: break
        }
        let properties = scalar.properties
        if properties.isIdeographic { return .single }
        switch properties.generalCategory {
        case .decimalNumber, .letterNumber, .otherNumber: return .digit
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter:
            if (0x3040...0x309F).contains(value) { return .single }  // hiragana
            if (0x30A0...0x30FF).contains(value) || (0x31F0...0x31FF).contains(value) { return .katakana }
            return .letter
        case .nonspacingMark, .spacingMark, .enclosingMark: return .mark
        case .connectorPunctuation: return .joiner
        default: return .other
        }
    }
}

/// `canonical:` folding of words, cut to ``WordTokenizer/maximumWordBytes``, remembering what it
/// folded: text repeats its words (a commit's rows share most of them, and so do the commits of
/// a store), and folding a word that is not ASCII costs microseconds. Two memories: this
/// object's (one per transaction or search, never shared between threads, no lock) and the
/// process's (behind a lock, kept across transactions); each forgets everything when full.
final class WordFolding {
    private var known = FoldedWords()
    /// Words remembered at most, in each memory.
    private static let capacity = 50_000
    private static let shared = Mutex(FoldedWords())

    func fold(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        let hash = FoldedWords.hash(scalars)
        if let folded = known.find(scalars, hash: hash) { return folded }
        let folded = Self.fold(scalars, hash: hash)
        if known.count >= Self.capacity { known.removeAll() }
        known.insert(scalars, hash: hash, value: folded)
        return folded
    }

    /// The folded form of `scalars` (whose ``FoldedWords/hash(_:)`` is `hash`) from the
    /// process's memory, folded and remembered there if new: for a caller that keeps a memory
    /// of its own (``WordVocabulary``), which this object's would only repeat.
    static func fold(_ scalars: ArraySlice<Unicode.Scalar>, hash: Int) -> String {
        if let remembered = shared.withLock({ $0.find(scalars, hash: hash) }) { return remembered }
        var word = String.UnicodeScalarView()
        word.append(contentsOf: scalars)
        let folded = fold(String(word))
        shared.withLock { memory in
            // Another thread may have folded it meanwhile: remember it once.
            guard memory.find(scalars, hash: hash) == nil else { return }
            if memory.count >= capacity { memory.removeAll() }
            memory.insert(scalars, hash: hash, value: folded)
        }
        return folded
    }

    static func fold(_ word: String) -> String {
        let folded = TextFolding.canonical(word)
        guard folded.utf8.count > WordTokenizer.maximumWordBytes else { return folded }
        var cut = ""
        var bytes = 0
        for character in folded {
            let size = character.utf8.count
            if bytes + size > WordTokenizer.maximumWordBytes { break }
            cut.append(character)
            bytes += size
        }
        return cut
    }
}

import Synchronization

/// A unit of text read as an ASCII byte by ``WordTokenizer``'s lowercasing: a UTF-8 byte, or a
/// scalar below 0x80.
protocol ASCIIUnit {
    var asciiByte: UInt8 { get }
}

extension UInt8: ASCIIUnit {
    var asciiByte: UInt8 { self }
}

extension Unicode.Scalar: ASCIIUnit {
    var asciiByte: UInt8 { UInt8(truncatingIfNeeded: value) }
}
