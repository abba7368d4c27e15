/// A second reading of FORMAT.md: the store file format decoded and encoded from the document
/// alone, for the tools that check the engine.
///
/// The engine keeps its own codec (`Sources/StrataStorage/Log/FormatConstants.swift` and the
/// files beside it). This one deliberately shares nothing with it — no import of the engine's
/// format code, not its checksum, not its LZ4 — so that where the two disagree, one of them (or
/// the document) is wrong, and a test says so. Every reader of raw store bytes outside the
/// engine goes through it: the format decoder test, the corruption and forgery tests, the
/// fuzzers' store surgery. One file per concept:
///
/// | file | FORMAT.md | what |
/// |---|---|---|
/// | `ReferenceFormat.swift` | §1–§7 | the constants (frame types: `ReferenceFrameType.swift`) |
/// | `CRC32C.swift` | introduction | the checksum |
/// | `Array+LittleEndian.swift` | introduction | fixed-width fields |
/// | `ByteReader.swift`, `ByteWriter.swift` | §5, §6 | records read and written field by field, varints |
/// | `LZ4Block.swift` | §3 "Compression" | decoding a compressed payload |
/// | `HeaderSlot.swift` | §2 | a header slot |
/// | `FrameHeader.swift`, `Frame.swift` | §3 | a frame's header; a whole, validated frame |
/// | `PageImage.swift` | §4 | a page image and its cells; ``FormatViolation``, what every decoder throws |
/// | `PageImage+Encoding.swift` | §4 | a leaf cell's bytes; a packed leaf image built from cells |
/// | `LeafDelta.swift` | §4 "Leaf deltas" | a leaf delta frame's changes, and the leaf it reads as |
/// | `TreeNode.swift` | §4, §6 | what a root or child offset names: a page, or a delta read as its leaf |
/// | `CommitRecord.swift` | §5 | a commit frame's operations |
/// | `CheckpointRecord.swift` | §6 | a checkpoint frame's catalog |
///
/// Decoding validates what lies inside the structure decoded (a frame's checksums and lengths,
/// a page's slots and cells, a record's limits); what needs the rest of the file (a child
/// offset that must hold a page frame, replay's semantic checks) is the caller's, except that a
/// leaf delta, which reads as a leaf only with its base frame, is resolved against the file by
/// `LeafDelta.swift` and `TreeNode.swift`. Encoding writes whatever it is given, absurd values
/// included: forging is what the tools use it for.
package enum ReferenceFormat {
    // §1 Layout.

    /// Bytes of one header slot's block; slot 0 starts at 0, slot 1 at this offset.
    package static let slotBlockSize = 4096
    /// Bytes of a header slot that carry fields; the rest of its block is zero.
    package static let slotLength = 64
    /// Where the log — the first frame — begins: right after the two slot blocks.
    package static let logStart = 8192
    /// Every frame starts at a multiple of this.
    package static let frameAlignment = 8

    // §2 Header slot.

    /// ASCII `STRATADB`: the first 8 bytes of a header slot.
    package static let slotMagic: [UInt8] = Array("STRATADB".utf8)
    /// The newest format version this reading knows, and the one its encoders write. Version 2
    /// is version 1 with leaf delta frames (§13): a slot saying 1 or 2 is read alike.
    package static let formatVersion: UInt32 = 2
    /// The smallest and largest page sizes (both powers of two, as every page size is).
    package static let pageSizes = 4096...32768

    // §3 Frames.

    /// The first 4 bytes of a frame, read as a little-endian u32 (the bytes are ASCII `SFRM`).
    package static let frameMagic: UInt32 = 0x4D52_4653
    /// Bytes of a frame header; the payload follows.
    package static let frameHeaderLength = 40
    /// Bit 0 of a frame's flags: the payload is one LZ4 block.
    package static let compressedFlag: UInt8 = 1
    /// LZ4 never expands a block more than this many times: a larger raw length is invalid.
    package static let maximumExpansion = 255

    // §4 Page images.

    /// Bytes of a page image's header: kind, level, count, cellStart, fragmented.
    package static let pageHeaderLength = 8
    /// Byte 0 of a page image.
    package static let leafKind: UInt8 = 1
    package static let branchKind: UInt8 = 2
    /// A page's level is below this (and so a tree's height is at most this).
    package static let maximumHeight = 32
    /// Key lengths: 1...1024 (a branch's cell 0 alone has an empty key).
    package static let maximumKeyLength = 1024
    /// Value lengths, inline or in an overflow frame.
    package static let maximumValueLength = 64 << 20
    /// Bit 31 of a leaf cell's value info: the value is in an overflow frame.
    package static let overflowBit: UInt32 = 0x8000_0000
    /// Bytes of a leaf cell before its key: u16 key length, u32 value info.
    package static let leafCellHeaderLength = 6
    /// Bytes of a branch cell before its key: u16 key length, u64 child offset.
    package static let branchCellHeaderLength = 10

    // §5, §6 Records.

    /// The longest commit or checkpoint payload (raw).
    package static let maximumRecordLength = 1 << 30
    /// Tree names: 1...255 bytes of UTF-8.
    package static let maximumTreeNameLength = 255
    /// A tree's entry count is at most 2^48.
    package static let maximumEntryCount: UInt64 = 1 << 48

    /// Whether a value of `valueLength` bytes under a key of `keyLength` bytes is stored inline
    /// in a leaf of `pageSize`-byte pages (§4: exactly when `6 + k + v ≤ P / 4`).
    package static func isInline(keyLength: Int, valueLength: Int, pageSize: Int) -> Bool {
        leafCellHeaderLength + keyLength + valueLength <= pageSize / 4
    }

    /// Whether `pageSize` is one a header slot may hold: a power of two in ``pageSizes``.
    package static func isValidPageSize(_ pageSize: UInt64) -> Bool {
        pageSize >= UInt64(pageSizes.lowerBound) && pageSize <= UInt64(pageSizes.upperBound)
            && pageSize & (pageSize - 1) == 0
    }

    /// Whether a key sorts before another: byte strings compared as by `memcmp`, then the
    /// shorter first (§4).
    package static func keyPrecedes(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        first.lexicographicallyPrecedes(second)
    }
}
