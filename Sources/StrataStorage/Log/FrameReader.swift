/// Reads single frames from a file with full validation. Shared by page loads, recovery and
/// `check`.
struct FrameReader {
    let file: any StorageFile

    /// Reads and validates the header only; `nil` if the bytes are not a valid frame header
    /// or the frame would run past `limit`.
    func header(at offset: UInt64, limit: UInt64) throws -> FrameHeader? {
        // Offsets come from the file: compare without overflowing.
        guard offset <= limit, limit - offset >= UInt64(Format.frameHeaderLength) else { return nil }
        return try withUnsafeTemporaryAllocation(byteCount: Format.frameHeaderLength, alignment: 8) { buffer in
            let n = try file.read(into: buffer, at: offset)
            guard n == Format.frameHeaderLength,
                  let frameHeader = FrameHeader.decode(UnsafeRawBufferPointer(buffer), at: offset) else { return nil }
            do throws(FrameDefect) {
                try frameHeader.check(expecting: nil, maxRawLength: Int(UInt32.max), available: limit - offset)
            } catch {
                return nil
            }
            return frameHeader
        }
    }

    /// Reads the payload of a frame whose header ``header(at:limit:)`` returned; `nil` if its
    /// checksum fails or it does not decompress to its raw length.
    func payload(of frameHeader: FrameHeader, at offset: UInt64) throws -> [UInt8]? {
        if case .success(let bytes) = try checkedPayload(of: frameHeader, at: offset) { return bytes }
        return nil
    }

    /// The payload, or the defect that makes the frame invalid. Throws only I/O errors.
    func checkedPayload(of frameHeader: FrameHeader, at offset: UInt64) throws -> Result<[UInt8], FrameDefect> {
        let start = offset.addingReportingOverflow(UInt64(Format.frameHeaderLength))
        guard !start.overflow else { return .failure(.invalidHeader) }
        var stored = [UInt8](repeating: 0, count: Int(frameHeader.storedLength))
        let n = try stored.withUnsafeMutableBytes { try file.read(into: $0, at: start.partialValue) }
        guard n == stored.count else {
            let available = UInt64(Format.frameHeaderLength + n)
            return .failure(.truncated(frameLength: frameHeader.frameLength, available: available))
        }
        var raw = [UInt8](repeating: 0, count: frameHeader.isCompressed ? Int(frameHeader.rawLength) : 0)
        let checked: FrameDefect? = stored.withUnsafeBytes { storedBytes in
            raw.withUnsafeMutableBytes { rawBytes in
                do throws(FrameDefect) {
                    _ = try frameHeader.checkPayload(storedBytes, decompressingInto: rawBytes)
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let checked { return .failure(checked) }
        return .success(frameHeader.isCompressed ? raw : stored)
    }

    /// Reads and validates the frame at `offset`, which must be of `type` with at most
    /// `maxRawLength` raw payload bytes; throws `corrupt` otherwise.
    func read(at offset: UInt64, expecting type: FrameType, maxRawLength: Int) throws -> (FrameHeader, [UInt8]) {
        let size = try file.size()
        guard let frameHeader = try header(at: offset, limit: size) else {
            throw StrataError.corrupt(FrameDefect.invalidHeader.description, offset: offset)
        }
        do throws(FrameDefect) {
            try frameHeader.check(expecting: type, maxRawLength: maxRawLength, available: size - offset)
        } catch {
            throw StrataError.corrupt(error.description, offset: offset)
        }
        switch try checkedPayload(of: frameHeader, at: offset) {
        case .success(let payload): return (frameHeader, payload)
        case .failure(let defect): throw StrataError.corrupt(defect.description, offset: offset)
        }
    }
}
