extension ReferenceFormat {
    /// One header slot (FORMAT.md §2): 64 bytes at the start of a 4096-byte block, slot 0 at
    /// offset 0 and slot 1 at 4096.
    ///
    /// ```
    ///  0        8        12       16         24           32         40           48       56     60
    ///  | magic  | format | page   | sequence | checkpoint | durable  | checkpoint | file id | flags | crc32c
    ///  |STRATADB| version| size   |          | offset     | end      | txid       |         |       | 0..<60
    /// ```
    package struct HeaderSlot: Equatable, Sendable {
        package var formatVersion: UInt32
        /// The logical page size `P`.
        package var pageSize: UInt32
        /// The valid slot with the higher sequence is the current one.
        package var sequence: UInt64
        /// Where the newest checkpoint frame starts.
        package var checkpointOffset: UInt64
        /// Every frame ending at or before this offset had been synced when the slot was written.
        package var durableEnd: UInt64
        /// The last transaction the checkpoint includes.
        package var checkpointTxid: UInt64
        /// Chosen at creation, kept by compaction, the same in both slots.
        package var fileID: UInt64
        /// Reserved: 0.
        package var flags: UInt32

        /// A slot holding these fields (version ``ReferenceFormat/formatVersion`` and flags 0
        /// unless given).
        package init(formatVersion: UInt32 = ReferenceFormat.formatVersion, pageSize: UInt32, sequence: UInt64,
                     checkpointOffset: UInt64, durableEnd: UInt64, checkpointTxid: UInt64, fileID: UInt64,
                     flags: UInt32 = 0) {
            self.formatVersion = formatVersion
            self.pageSize = pageSize
            self.sequence = sequence
            self.checkpointOffset = checkpointOffset
            self.durableEnd = durableEnd
            self.checkpointTxid = checkpointTxid
            self.fileID = fileID
            self.flags = flags
        }

        /// A field's place in the slot: for reading one field, and for forging it.
        package enum Field: CaseIterable, Sendable {
            case magic, formatVersion, pageSize, sequence, checkpointOffset, durableEnd, checkpointTxid, fileID, flags,
                 checksum

            /// Bytes from the start of the slot.
            package var offset: Int {
                switch self {
                case .magic: return 0
                case .formatVersion: return 8
                case .pageSize: return 12
                case .sequence: return 16
                case .checkpointOffset: return 24
                case .durableEnd: return 32
                case .checkpointTxid: return 40
                case .fileID: return 48
                case .flags: return 56
                case .checksum: return 60
                }
            }

            /// Bytes the field takes.
            package var width: Int {
                switch self {
                case .formatVersion, .pageSize, .flags, .checksum: return 4
                case .magic, .sequence, .checkpointOffset, .durableEnd, .checkpointTxid, .fileID: return 8
                }
            }

            /// The field's name in FORMAT.md's table.
            package var name: String {
                switch self {
                case .magic: return "magic"
                case .formatVersion: return "format version"
                case .pageSize: return "page size"
                case .sequence: return "sequence"
                case .checkpointOffset: return "checkpoint offset"
                case .durableEnd: return "durable end"
                case .checkpointTxid: return "checkpoint txid"
                case .fileID: return "file id"
                case .flags: return "flags"
                case .checksum: return "checksum"
                }
            }
        }

        /// The checksum covers the bytes before it.
        private static let checksummedLength = Field.checksum.offset

        /// Where slot `index` (0 or 1) starts in the file.
        package static func start(ofSlot index: Int) -> Int {
            precondition(index == 0 || index == 1, "there are two header slots, not slot \(index)")
            return index * ReferenceFormat.slotBlockSize
        }

        /// Where `field` of slot `index` lies in the file.
        package static func position(of field: Field, slot index: Int) -> Int { start(ofSlot: index) + field.offset }

        /// What one slot of a file holds, in the first two steps of §2's order.
        package enum Reading: Equatable, Sendable {
            /// No magic (or the file is too short to hold the slot).
            case noMagic
            /// The magic, but a checksum that does not match: a torn or damaged write, ignored.
            case checksumMismatch
            /// Magic and checksum match; the fields are as written (``validate()`` judges them).
            case sealed(HeaderSlot)
        }

        /// Reads slot `index` of `file`.
        package static func read(_ file: [UInt8], slot index: Int) -> Reading {
            let start = start(ofSlot: index)
            guard file.count >= start + ReferenceFormat.slotLength,
                  file[start..<(start + 8)].elementsEqual(ReferenceFormat.slotMagic) else { return .noMagic }
            let checksum = CRC32C.checksum(file[start..<(start + checksummedLength)])
            guard checksum == UInt32(file.littleEndian(at: start + Field.checksum.offset, width: 4)) else {
                return .checksumMismatch
            }
            func field(_ field: Field) -> UInt64 { file.littleEndian(at: start + field.offset, width: field.width) }
            return .sealed(HeaderSlot(
                formatVersion: UInt32(field(.formatVersion)), pageSize: UInt32(field(.pageSize)),
                sequence: field(.sequence), checkpointOffset: field(.checkpointOffset), durableEnd: field(.durableEnd),
                checkpointTxid: field(.checkpointTxid), fileID: field(.fileID), flags: UInt32(field(.flags))))
        }

        /// Whether a version above ours makes this slot refused ("made by a newer version"); a
        /// version-1 slot is not newer (§13: version 2 reads it as it is).
        package var isNewerVersion: Bool { formatVersion > ReferenceFormat.formatVersion }

        /// §2 steps 3 and 4 for a sealed slot: a newer version, version 0, a page size that is no
        /// power of two in 4096...32768, a sequence of 2^64 − 1 or flags other than 0 were written
        /// so (the slot is not torn), and the file is refused.
        package func validate() throws {
            guard !isNewerVersion else {
                throw FormatViolation("format version \(formatVersion) is newer than \(ReferenceFormat.formatVersion)")
            }
            guard formatVersion != 0 else { throw FormatViolation("format version 0") }
            guard ReferenceFormat.isValidPageSize(UInt64(pageSize)) else {
                throw FormatViolation("page size \(pageSize)")
            }
            guard sequence != .max else { throw FormatViolation("sequence 2^64 - 1 has no successor") }
            guard flags == 0 else { throw FormatViolation("flags \(flags)") }
        }

        /// The slot's 64 bytes, checksum included.
        package func encoded() -> [UInt8] {
            var writer = ByteWriter()
            writer.append(ReferenceFormat.slotMagic)
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

        /// Recomputes slot `index`'s checksum in `file` after a field changed.
        package static func reseal(_ file: inout [UInt8], slot index: Int) {
            let start = start(ofSlot: index)
            let checksum = CRC32C.checksum(file[start..<(start + checksummedLength)])
            file.setLittleEndian(UInt64(checksum), at: start + Field.checksum.offset, width: 4)
        }
    }
}
