/// The constants of the file format. FORMAT.md is the specification; this file mirrors it and
/// nothing else defines a byte of the format.
enum Format {
    /// Format version written into each header slot. Opening a file whose version is higher
    /// fails with ``StrataError/unsupportedFormatVersion(found:supported:)``. Version 2 added
    /// leaf delta frames; a version-1 file is read as it is (FORMAT.md §13).
    static let version: UInt32 = 2
    /// The first version whose files may hold leaf delta frames: a writer appends a delta only
    /// to a file whose current header slot says at least this.
    static let leafDeltaVersion: UInt32 = 2

    /// "STRATADB": the first 8 bytes of each header slot.
    static let headerMagic: UInt64 = 0x4244_4154_4152_5453
    /// Size of one header slot's block; slot 0 at offset 0, slot 1 at `slotSize`.
    static let slotSize = 4096
    /// Bytes of a header slot that carry data (the rest of its block is zero).
    static let slotLength = 64
    /// The log (the first frame) starts here.
    static let logStart: UInt64 = 8192

    /// "SFRM" little-endian: the first 4 bytes of every frame.
    static let frameMagic: UInt32 = 0x4D52_4653
    static let frameHeaderLength = 40
    /// Frames start at multiples of this.
    static let frameAlignment = 8

    /// Bit 0 of a frame's flags: the payload is one LZ4 block.
    static let flagCompressed: UInt8 = 1

    /// Page sizes are powers of two in `minPageSize...maxPageSize` (FORMAT.md §2).
    static let minPageSize = 4096
    static let maxPageSize = 32768
    static let defaultPageSize = 4096

    /// Page kinds (byte 0 of a page image).
    static let pageKindLeaf: UInt8 = 1
    static let pageKindBranch: UInt8 = 2
    static let pageHeaderLength = 8
    /// The deepest tree the decoder accepts (a 32 KiB-page tree of 2^64 keys is far shallower).
    static let maxTreeHeight = 32
    /// The most entries a tree's count may claim (2^48): far above what a file can hold, far
    /// enough below `Int.max` that counting can never overflow.
    static let maxEntryCount: UInt64 = 1 << 48

    /// Leaf cell: u16 key length, u32 value info (bit 31: overflow; bits 0–30: value length).
    static let leafCellHeader = 6
    static let overflowBit: UInt32 = 0x8000_0000
    /// Bytes of an overflow reference inside a leaf cell (the overflow frame's offset).
    static let overflowReferenceLength = 8
    /// Branch cell: u16 key length, u64 child frame offset.
    static let branchCellHeader = 10

    /// Commit record operation codes (FORMAT.md, "Commit frame").
    static let opPut: UInt8 = 1
    static let opDelete: UInt8 = 2
    static let opPutOverflow: UInt8 = 3
    static let opCreateTree: UInt8 = 4
    static let opDropTree: UInt8 = 5

    /// Upper bound on a commit or checkpoint payload (raw), to bound allocation on bad input.
    static let maxRecordLength = 1 << 30

    /// A leaf delta's put (FORMAT.md §4, "Leaf deltas"): a whole leaf cell follows.
    static let deltaPut: UInt8 = 1
    /// A leaf delta's delete: a `u16` key length and the key follow.
    static let deltaDelete: UInt8 = 2
    /// A leaf delta's payload before its changes: the u64 base offset and the u16 change count.
    static let deltaHeaderLength = 10
}

/// The kind of a frame (byte 4 of its header).
enum FrameType: UInt8, Sendable {
    /// A B+tree page image written by a checkpoint.
    case page = 1
    /// One transaction's logical changes.
    case commit = 2
    /// The end of a checkpoint: every tree's root.
    case checkpoint = 3
    /// A value too large to live in a leaf.
    case overflow = 4
    /// A leaf as a few changed cells against the page frame of an earlier image.
    case leafDelta = 5

    /// The longest raw payload a frame of this type can have (FORMAT.md §3): a longer one is not
    /// a valid frame, so no reader allocates more for it.
    var maxRawLength: Int {
        switch self {
        case .page, .leafDelta: return Format.maxPageSize
        case .commit, .checkpoint: return Format.maxRecordLength
        case .overflow: return StoreLimits.maxValueLength
        }
    }
}
