/// Raw access for ``WordTokenizer``'s Latin path: the words of a text whose scalars are all
/// below U+0240 (ASCII, Latin-1 and most of the Latin extensions), found on the text's UTF-8
/// bytes, each handed over as the bytes of its raw spelling (not folded), with no scalar array
/// and no `String` per word. A word index's vocabulary looks the spelling up by those bytes
/// (``SpellingTable``) and folds only a spelling it has not met (decision 95).
///
/// Invariants: `bytes` is the text's UTF-8, lent by `String.withUTF8` for the call, and
/// ``isLatinUTF8(_:)`` has accepted it before any other read: every unit is an ASCII byte, or
/// a lead byte C2…C8 followed, inside the buffer, by one continuation byte 80…BF. So a unit starting at
/// `i < bytes.count` is one byte (below 80) or two (a lead at `i`, its continuation at `i + 1 <
/// bytes.count`), its scalar is below 0x240 and indexes ``WordTokenizer/latinKinds`` (0x250
/// entries), and the positions `segment` hands out are the starts of units, so each word's range
/// lies inside the buffer and begins and ends on whole scalars. The word buffers `body` receives
/// are lent for the call and never kept.
extension WordTokenizer {
    /// Calls `body` with the UTF-8 bytes of each word of `text`, unfolded, in order, and returns
    /// true; returns false without calling it when `text` holds a scalar at or above U+0240
    /// (the caller takes the general path, which classifies every scalar).
    static func forEachLatinWord(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard isLatinUTF8(bytes) else { return false }
            let kinds = latinKinds
            segment(from: 0, to: bytes.count, unit: { i in
                let lead = bytes[i]
                if lead < 0x80 { return (kinds[Int(lead)], i + 1) }
                return (kinds[Int(lead & 0x1F) << 6 | Int(bytes[i + 1] & 0x3F)], i + 2)
            }, word: { range in body(UnsafeBufferPointer(rebasing: bytes[range])) })
            return true
        }
    }

    /// Whether `bytes` are ASCII and two-byte sequences of scalars U+0080…U+023F only (leads
    /// C2…C8, each followed by a continuation byte): what the Latin path decodes.
    static func isLatinUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let count = bytes.count
        while i < count {
            let byte = bytes[i]
            if byte < 0x80 {
                i += 1
            } else if byte >= 0xC2, byte <= 0xC8, i + 1 < count, bytes[i + 1] & 0xC0 == 0x80 {
                i += 2
            } else {
                return false
            }
        }
        return true
    }
}
