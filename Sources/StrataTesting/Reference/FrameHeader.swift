extension ReferenceFormat {
    /// A frame's 40-byte header (FORMAT.md §3), its fields as they stand — decoded without
    /// judging them (``Frame`` does that).
    ///
    /// ```
    ///  0       4    5     6     8        12       16     24         32         36         40
    ///  | magic |type|flags| 0 0 | stored | raw    | txid | durable  | payload  | header   |
    ///  | SFRM  |    |     |     | length | length |      | end      | crc32c   | crc32c   |
    /// ```
    package struct FrameHeader: Equatable, Sendable {
        package var magic: UInt32
        /// Byte 4; ``type`` when it is a known one.
        package var typeCode: UInt8
        package var flags: UInt8
        /// Bytes 6–7, which must be 0.
        package var reserved: UInt16
        /// Payload bytes in the file.
        package var storedLength: UInt32
        /// Payload bytes once decompressed.
        package var rawLength: UInt32
        package var txid: UInt64
        /// The writer's durable end when it wrote the frame.
        package var durableEnd: UInt64
        /// `crc32c` of the stored payload.
        package var payloadChecksum: UInt32
        /// `crc32c` of bytes 0..<36 followed by the frame's own offset as a u64.
        package var headerChecksum: UInt32

        /// A field's place in the header: for reading one field, and for forging it.
        package enum Field: CaseIterable, Sendable {
            case magic, type, flags, reserved, storedLength, rawLength, txid, durableEnd, payloadChecksum,
                 headerChecksum

            /// Bytes from the start of the frame.
            package var offset: Int {
                switch self {
                case .magic: return 0
                case .type: return 4
                case .flags: return 5
                case .reserved: return 6
                case .storedLength: return 8
                case .rawLength: return 12
                case .txid: return 16
                case .durableEnd: return 24
                case .payloadChecksum: return 32
                case .headerChecksum: return 36
                }
            }

            /// Bytes the field takes.
            package var width: Int {
                switch self {
                case .type, .flags: return 1
                case .reserved: return 2
                case .magic, .storedLength, .rawLength, .payloadChecksum, .headerChecksum: return 4
                case .txid, .durableEnd: return 8
                }
            }

            /// The field's name in FORMAT.md's table.
            package var name: String {
                switch self {
                case .magic: return "magic"
                case .type: return "type"
                case .flags: return "flags"
                case .reserved: return "reserved"
                case .storedLength: return "stored length"
                case .rawLength: return "raw length"
                case .txid: return "txid"
                case .durableEnd: return "durable end"
                case .payloadChecksum: return "payload checksum"
                case .headerChecksum: return "header checksum"
                }
            }
        }

        /// The header checksum covers the bytes before it (then the frame's offset).
        private static let checksummedLength = Field.headerChecksum.offset

        /// A header of a frame holding `storedLength` payload bytes, flags 0 (stored raw) unless
        /// given; the checksums are computed when it is encoded or the frame is resealed.
        package init(type: ReferenceFrameType, flags: UInt8 = 0, storedLength: UInt32, rawLength: UInt32, txid: UInt64,
                     durableEnd: UInt64, payloadChecksum: UInt32 = 0) {
            magic = ReferenceFormat.frameMagic
            typeCode = type.rawValue
            self.flags = flags
            reserved = 0
            self.storedLength = storedLength
            self.rawLength = rawLength
            self.txid = txid
            self.durableEnd = durableEnd
            self.payloadChecksum = payloadChecksum
            headerChecksum = 0
        }

        /// The fields of the header at `offset` in `file`, unjudged; `file` must hold all 40 bytes.
        package init(fieldsIn file: [UInt8], at offset: Int) {
            func field(_ field: Field) -> UInt64 { file.littleEndian(at: offset + field.offset, width: field.width) }
            magic = UInt32(field(.magic))
            typeCode = UInt8(field(.type))
            flags = UInt8(field(.flags))
            reserved = UInt16(field(.reserved))
            storedLength = UInt32(field(.storedLength))
            rawLength = UInt32(field(.rawLength))
            txid = field(.txid)
            durableEnd = field(.durableEnd)
            payloadChecksum = UInt32(field(.payloadChecksum))
            headerChecksum = UInt32(field(.headerChecksum))
        }

        /// The frame's type, when byte 4 names one.
        package var type: ReferenceFrameType? { ReferenceFrameType(rawValue: typeCode) }
        /// Whether the payload is one LZ4 block.
        package var isCompressed: Bool { flags & ReferenceFormat.compressedFlag != 0 }
        /// The whole frame's length: header, payload, padding to the next multiple of 8.
        package var frameLength: Int { FrameHeader.frameLength(storedLength: Int(storedLength)) }

        /// `round_up(40 + storedLength, 8)`.
        package static func frameLength(storedLength: Int) -> Int {
            let unpadded = ReferenceFormat.frameHeaderLength + storedLength
            return (unpadded + ReferenceFormat.frameAlignment - 1) / ReferenceFormat.frameAlignment
                * ReferenceFormat.frameAlignment
        }

        /// The header checksum the frame at `offset` in `file` must hold: its bytes 0..<36, then
        /// `offset` as 8 little-endian bytes (so a frame is valid only where it was written).
        package static func expectedHeaderChecksum(in file: [UInt8], frameAt offset: Int) -> UInt32 {
            headerChecksum(of: file[offset..<(offset + checksummedLength)], frameOffset: offset)
        }

        /// The header checksum of the 36 bytes `headerBytes` for a frame at `frameOffset`.
        private static func headerChecksum(of headerBytes: ArraySlice<UInt8>, frameOffset: Int) -> UInt32 {
            let header = CRC32C.checksum(headerBytes)
            return CRC32C.checksum(littleEndianBytes(UInt64(frameOffset), width: 8), extending: header)
        }

        /// The 40 bytes of this header for a frame at file offset `offset`, header checksum
        /// computed for that offset (the ``headerChecksum`` field is ignored).
        package func encoded(at offset: Int) -> [UInt8] {
            var writer = ByteWriter()
            writer.u32(magic)
            writer.u8(typeCode)
            writer.u8(flags)
            writer.u16(reserved)
            writer.u32(storedLength)
            writer.u32(rawLength)
            writer.u64(txid)
            writer.u64(durableEnd)
            writer.u32(payloadChecksum)
            writer.u32(FrameHeader.headerChecksum(of: writer.bytes[...], frameOffset: offset))
            return writer.bytes
        }
    }
}
