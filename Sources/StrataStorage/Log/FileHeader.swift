/// One of the two header slots at the start of the file (FORMAT.md, "Header").
///
/// The slots are written alternately; the valid slot with the higher `sequence` wins, so a torn
/// header write always leaves the other slot intact.
///
/// ```
///  0        8        12        16         24            32           40        48        56     60
///  | magic  | format | page    | sequence | checkpoint  | durable    | check-  | file id | flags | crc32c
///  |STRATADB| version| size    |          | frame offset| end        | point tx|         |       | 0..<60
/// ```
struct FileHeader: Equatable {
    var formatVersion: UInt32 = Format.version
    var pageSize: UInt32
    var sequence: UInt64
    /// Offset of the newest checkpoint frame.
    var checkpointOffset: UInt64
    /// Every frame that ends at or before this offset was durable when the slot was written.
    var durableEnd: UInt64
    /// The last transaction the checkpoint includes.
    var checkpointTxid: UInt64
    /// A random identifier chosen when the file is created.
    var fileID: UInt64
    var flags: UInt32 = 0

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: Format.slotLength)
        w.u64(Format.headerMagic)
        w.u32(formatVersion)
        w.u32(pageSize)
        w.u64(sequence)
        w.u64(checkpointOffset)
        w.u64(durableEnd)
        w.u64(checkpointTxid)
        w.u64(fileID)
        w.u32(flags)
        w.u32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// What reading one slot found (FORMAT.md §2).
    enum SlotState: Equatable {
        case valid(FileHeader)
        /// Magic matches but the checksum does not (a torn or damaged slot).
        case damaged
        /// Not a Strata header (all zero, or other bytes).
        case foreign
        /// Magic and checksum fine, but the version is newer than we read.
        case newerVersion(UInt32)
        /// Magic and checksum fine, but a field no writer writes (version 0, a page size that is
        /// not a power of two in 4096...32768, flags other than 0): the slot was written so, it
        /// was not torn.
        case invalid(String)
    }

    /// Decodes one slot's 64 bytes; validates in the order of FORMAT.md §2: magic, checksum,
    /// version, then the other fields.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> SlotState {
        guard bytes.count >= Format.slotLength else { return .foreign }
        guard bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian == Format.headerMagic else {
            return .foreign
        }
        let stored = bytes.loadUnaligned(fromByteOffset: 60, as: UInt32.self).littleEndian
        guard CRC32C.checksum(bytes.baseAddress!, count: 60) == stored else { return .damaged }
        func u32(_ at: Int) -> UInt32 { bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian }
        func u64(_ at: Int) -> UInt64 { bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self).littleEndian }
        let version = u32(8)
        guard version <= Format.version else { return .newerVersion(version) }
        guard version >= 1 else { return .invalid("format version 0") }
        let pageSize = u32(12)
        guard pageSize >= UInt32(Format.minPageSize), pageSize <= UInt32(Format.maxPageSize), pageSize & (pageSize - 1) == 0 else {
            return .invalid("page size \(pageSize)")
        }
        let flags = u32(56)
        guard flags == 0 else { return .invalid("flags \(flags)") }
        // Writers start at 1 and add one per header write: 2^64 − 1 has no successor, so a slot
        // holding it was not written by a writer (and the next checkpoint could not outrank it).
        let sequence = u64(16)
        guard sequence != .max else { return .invalid("sequence \(sequence) has no successor") }
        return .valid(FileHeader(
            formatVersion: version, pageSize: pageSize, sequence: sequence, checkpointOffset: u64(24),
            durableEnd: u64(32), checkpointTxid: u64(40), fileID: u64(48), flags: flags))
    }

    /// Offset of slot `index` (0 or 1).
    static func slotOffset(_ index: Int) -> UInt64 { UInt64(index * Format.slotSize) }
}
