extension ReferenceFormat {
    /// A valid frame (FORMAT.md §3) and its raw payload.
    ///
    /// Valid means: it starts at a multiple of 8 in the log; the magic and the header checksum
    /// (which covers the frame's own offset) match; the type and flags are known and a
    /// checkpoint is not compressed; the reserved bytes are 0; the lengths obey §3 and the
    /// type's bound; the whole frame, padding included, lies inside the file; the payload
    /// checksum matches; a compressed payload decodes to exactly the raw length.
    package struct Frame: Sendable {
        /// Where the frame starts in the file.
        package let offset: Int
        package let header: FrameHeader
        package let type: ReferenceFrameType
        /// The payload after decompression (`header.rawLength` bytes).
        package let payload: [UInt8]

        /// The valid frame at `offset` in `file`; throws, saying why, when there is none.
        package init(in file: [UInt8], at offset: Int) throws {
            guard offset >= ReferenceFormat.logStart, offset % ReferenceFormat.frameAlignment == 0 else {
                throw FormatViolation("frame offset \(offset) is not a multiple of 8 in the log")
            }
            guard offset <= file.count - ReferenceFormat.frameHeaderLength else {
                throw FormatViolation("a frame header at \(offset) runs past the end of the file (\(file.count) bytes)")
            }
            let header = FrameHeader(fieldsIn: file, at: offset)
            guard header.magic == ReferenceFormat.frameMagic else {
                throw FormatViolation("no frame magic at \(offset)")
            }
            guard header.headerChecksum == FrameHeader.expectedHeaderChecksum(in: file, frameAt: offset) else {
                throw FormatViolation("header checksum mismatch at \(offset)")
            }
            guard let type = header.type else { throw FormatViolation("frame type \(header.typeCode) at \(offset)") }
            guard header.flags & ~ReferenceFormat.compressedFlag == 0 else {
                throw FormatViolation("unknown frame flags \(header.flags) at \(offset)")
            }
            guard !(type == .checkpoint && header.isCompressed) else {
                throw FormatViolation("a compressed checkpoint frame at \(offset)")
            }
            guard header.reserved == 0 else { throw FormatViolation("reserved bytes \(header.reserved) at \(offset)") }
            let stored = Int(header.storedLength)
            let raw = Int(header.rawLength)
            if header.isCompressed {
                guard stored >= 1, raw <= ReferenceFormat.maximumExpansion * stored else {
                    throw FormatViolation("compressed frame at \(offset): stored \(stored), raw \(raw)")
                }
            } else {
                guard raw == stored else {
                    throw FormatViolation(
                        "uncompressed frame at \(offset): raw length \(raw) is not stored length \(stored)")
                }
            }
            guard raw <= type.maximumRawLength else {
                throw FormatViolation(
                    "a \(type) frame at \(offset) claims \(raw) raw bytes, above \(type.maximumRawLength)")
            }
            guard header.frameLength <= file.count - offset else {
                throw FormatViolation("the frame at \(offset) runs past the end of the file (\(file.count) bytes)")
            }
            let payloadStart = offset + ReferenceFormat.frameHeaderLength
            let storedPayload = file[payloadStart..<(payloadStart + stored)]
            guard CRC32C.checksum(storedPayload) == header.payloadChecksum else {
                throw FormatViolation("payload checksum mismatch at \(offset)")
            }
            self.offset = offset
            self.header = header
            self.type = type
            payload = header.isCompressed
                ? try LZ4Block.decode(Array(storedPayload), rawLength: raw) : Array(storedPayload)
        }

        /// The frame's whole length, padding included.
        package var length: Int { header.frameLength }
        /// Where the next frame starts.
        package var end: Int { offset + length }
        package var txid: UInt64 { header.txid }
        package var durableEnd: UInt64 { header.durableEnd }
        package var storedLength: Int { Int(header.storedLength) }
        package var rawLength: Int { Int(header.rawLength) }
        package var isCompressed: Bool { header.isCompressed }

        /// Whether a valid frame starts at `offset` in `file`.
        package static func isValid(in file: [UInt8], at offset: Int) -> Bool {
            (try? Frame(in: file, at: offset)) != nil
        }

        /// A whole frame of `type` holding `payload` stored raw (never compressed), padded with
        /// zeros, both checksums computed for file offset `offset`.
        package static func encoded(type: ReferenceFrameType, payload: [UInt8], txid: UInt64, durableEnd: UInt64,
                                    at offset: Int) -> [UInt8] {
            let header = FrameHeader(type: type, storedLength: UInt32(payload.count), rawLength: UInt32(payload.count),
                                     txid: txid, durableEnd: durableEnd, payloadChecksum: CRC32C.checksum(payload))
            var frame = header.encoded(at: offset) + payload
            frame += [UInt8](repeating: 0, count: header.frameLength - frame.count)
            return frame
        }

        /// Recomputes the header checksum of the frame at `offset` in `file`, after a header
        /// field changed (for its offset: a frame moved is resealed where it now is).
        package static func resealHeader(_ file: inout [UInt8], frameAt offset: Int) {
            let checksum = FrameHeader.expectedHeaderChecksum(in: file, frameAt: offset)
            file.setLittleEndian(UInt64(checksum), at: offset + FrameHeader.Field.headerChecksum.offset, width: 4)
        }

        /// Recomputes the payload checksum over the stored bytes (as many as the stored length
        /// says), then the header checksum, of the frame at `offset` in `file`: after its payload
        /// or its header changed.
        package static func reseal(_ file: inout [UInt8], frameAt offset: Int) {
            let stored = Int(file.littleEndian(at: offset + FrameHeader.Field.storedLength.offset, width: 4))
            let payloadStart = offset + ReferenceFormat.frameHeaderLength
            let checksum = CRC32C.checksum(file[payloadStart..<(payloadStart + stored)])
            file.setLittleEndian(UInt64(checksum), at: offset + FrameHeader.Field.payloadChecksum.offset, width: 4)
            resealHeader(&file, frameAt: offset)
        }
    }
}
