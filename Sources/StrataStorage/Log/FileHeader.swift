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
        var writer = ByteWriter(capacity: Format.slotLength)
        writer.u64(Format.headerMagic)
        writer.u32(formatVersion)
        writer.u32(pageSize)
        writer.u64(sequence)
        writer.u64(checkpointOffset)
        writer.u64(durableEnd)
        writer.u64(checkpointTxid)
        writer.u64(fileID)
        writer.u32(flags)
        writer.u32(CRC32C.checksum(writer.bytes))
        return writer.bytes
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
        // Every field lies in the 64 bytes checked above: the loads cannot fail.
        func field<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T? {
            ByteReader.loadLE(T.self, from: bytes, at: offset)
        }
        guard let magic = field(UInt64.self, at: 0), let version = field(UInt32.self, at: 8),
              let pageSize = field(UInt32.self, at: 12), let sequence = field(UInt64.self, at: 16),
              let checkpointOffset = field(UInt64.self, at: 24), let durableEnd = field(UInt64.self, at: 32),
              let checkpointTxid = field(UInt64.self, at: 40), let fileID = field(UInt64.self, at: 48),
              let flags = field(UInt32.self, at: 56), let stored = field(UInt32.self, at: 60)
        else { return .foreign }
        guard magic == Format.headerMagic else { return .foreign }
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[..<60])) == stored else { return .damaged }
        guard version <= Format.version else { return .newerVersion(version) }
        guard version >= 1 else { return .invalid("format version 0") }
        guard pageSize >= UInt32(Format.minPageSize), pageSize <= UInt32(Format.maxPageSize),
              pageSize & (pageSize - 1) == 0 else {
            return .invalid("page size \(pageSize)")
        }
        guard flags == 0 else { return .invalid("flags \(flags)") }
        // Writers start at 1 and add one per header write: 2^64 − 1 has no successor, so a slot
        // holding it was not written by a writer (and the next checkpoint could not outrank it).
        guard sequence != .max else { return .invalid("sequence \(sequence) has no successor") }
        return .valid(FileHeader(
            formatVersion: version, pageSize: pageSize, sequence: sequence, checkpointOffset: checkpointOffset,
            durableEnd: durableEnd, checkpointTxid: checkpointTxid, fileID: fileID, flags: flags))
    }

    /// Offset of slot `index` (0 or 1).
    static func slotOffset(_ index: Int) -> UInt64 { UInt64(index * Format.slotSize) }
}
