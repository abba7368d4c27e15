/// Appends frames to the end of the log (FORMAT.md, "Frames").
///
/// Used by the single writer only (under the store's writer gate). Durability is the
/// ``SyncCoordinator``'s business: this type reports how far it wrote and stamps each frame
/// with the durable end known when it was written. The file is grown in large steps
/// (preallocation makes each commit's `fdatasync` cheaper: no size change to journal) and cut
/// back to ``end`` on close. A failed write is not fatal (nothing after `end` counts, and the
/// next frame overwrites it); a failed sync is, and the coordinator remembers it.
final class LogWriter: @unchecked Sendable {
    let file: any StorageFile
    let path: String
    let sync: SyncCoordinator
    /// Offset where the next frame goes.
    private(set) var end: UInt64
    /// The file's length (≥ `end`): the log beyond `end` is zeros.
    private(set) var allocatedEnd: UInt64
    /// Where each frame is assembled (header, payload, padding) before it is written or
    /// gathered. Raw memory this writer owns: touched only in `LogWriter+Unsafe.swift`.
    var scratch: UnsafeMutableRawBufferPointer
    private(set) var bytesWritten: UInt64 = 0
    /// When set, every this many bytes appended are handed to the device at once
    /// (``StorageFile/startWriteback(at:length:)``): for a file written whole and synced once
    /// at the end (compaction, backup), the final sync then waits for the last stretch only,
    /// not for all of it. The live log needs none: its sync timer writes it back as it goes.
    var writebackStride: UInt64?
    private var writebackFrom: UInt64 = 0

    init(file: any StorageFile, path: String, end: UInt64, allocatedEnd: UInt64, sync: SyncCoordinator) {
        self.file = file
        self.path = path
        self.end = end
        self.allocatedEnd = allocatedEnd
        self.sync = sync
        writebackFrom = end
        scratch = LogWriter.allocateBuffer(byteCount: 64 << 10)
    }

    deinit { deallocateBuffers() }

    /// Throws ``StrataError/poisoned(cause:)`` once a sync of this file failed.
    func checkUsable() throws {
        if let failure = sync.failed { throw StrataError.poisoned(cause: failure) }
    }

    /// Appends one frame and returns its offset and total length. The payload is LZ4-compressed
    /// when `compress` is set and compression pays.
    @discardableResult
    func append(_ type: FrameType, txid: UInt64, payload: UnsafeRawBufferPointer,
                compress: Bool) throws -> (offset: UInt64, length: UInt64) {
        try checkUsable()
        // A longer payload would make a frame every reader refuses (and past 4 GiB its length
        // field could not hold it): refuse it before anything is written.
        guard payload.count <= type.maxRawLength else {
            throw StrataError.limitExceeded(what: "\(type) record", limit: UInt64(type.maxRawLength))
        }
        let header = Format.frameHeaderLength
        reserveScratch(header + LZ4.compressBound(payload.count) + Format.frameAlignment)
        var stored = payload.count
        var flags: UInt8 = 0
        if compress, let compressedLength = LZ4.compress(payload, into: scratchBytes(header..<scratch.count)) {
            stored = compressedLength
            flags = Format.flagCompressed
        } else {
            copyIntoScratch(payload, at: header)
        }
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(scratchBytes(header..<header + stored)))
        return try appendAssembled(type, txid: txid, flags: flags, storedLength: stored, rawLength: payload.count,
                                   payloadChecksum: crc)
    }

    /// Appends a page frame whose stored payload is copied from a frame of another file:
    /// `stored` is that frame's payload as stored (an LZ4 block when `flags` says so, of
    /// `rawLength` bytes once decompressed), `payloadChecksum` its checksum, which the caller
    /// checked. Only the header is new (its checksum covers the frame's new offset): a
    /// compaction copies a page no write changed without decompressing and compressing it.
    @discardableResult
    func appendStored(_ type: FrameType, txid: UInt64, flags: UInt8, stored: UnsafeRawBufferPointer, rawLength: Int,
                      payloadChecksum: UInt32) throws -> (offset: UInt64, length: UInt64) {
        try checkUsable()
        // The source frame was validated, so these hold; checked again so that no caller's
        // mistake writes a frame every reader refuses.
        guard rawLength <= type.maxRawLength, flags & Format.flagCompressed != 0 || stored.count == rawLength else {
            throw StrataError.invalidArgument("a stored \(type) payload of \(stored.count) bytes, \(rawLength) raw")
        }
        let header = Format.frameHeaderLength
        reserveScratch(header + stored.count + Format.frameAlignment)
        copyIntoScratch(stored, at: header)
        return try appendAssembled(type, txid: txid, flags: flags, storedLength: stored.count, rawLength: rawLength,
                                   payloadChecksum: payloadChecksum)
    }

    /// Writes the header of the frame whose payload ``scratch`` holds after the header's
    /// bytes, pads it, and writes (or gathers) the frame at ``end``.
    private func appendAssembled(_ type: FrameType, txid: UInt64, flags: UInt8, storedLength stored: Int,
                                 rawLength: Int, payloadChecksum crc: UInt32) throws -> (offset: UInt64, length: UInt64) {
        let header = Format.frameHeaderLength
        let length = FrameHeader.frameLength(storedLength: stored)
        let offset = end
        let frameHeader = FrameHeader(
            type: type, flags: flags, storedLength: UInt32(stored), rawLength: UInt32(rawLength),
            txid: txid, durableEnd: sync.durableEnd, payloadChecksum: crc)
        frameHeader.encode(into: scratchBytes(0..<header), at: offset)
        // Zero the padding so the file's bytes are deterministic.
        let padded = Int(length)
        zeroScratch(header + stored..<padded)
        let frame = UnsafeRawBufferPointer(scratchBytes(0..<padded))
        if isGathering, let capacity = gatheredCapacity, padded <= capacity {
            if gatheredLength + padded > capacity { try writeGathered() }
            gather(frame)
        } else {
            try writeGathered()
            try write(frame, at: offset)
        }
        end = offset + length
        bytesWritten += length
        return (offset, length)
    }

    /// Writes `bytes` at `offset`, the end of what is in the file.
    private func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        let through = offset + UInt64(bytes.count)
        try preallocate(through: through)
        try file.write(bytes, at: offset)
        sync.noteWritten(through)
        if let stride = writebackStride, through - writebackFrom >= stride {
            file.startWriteback(at: writebackFrom, length: through - writebackFrom)
            writebackFrom = through
        }
    }

    // MARK: Gathering writes (copies)

    /// Frames appended but not yet written, from ``gatheredStart``: set by
    /// ``gatherWrites(upTo:)``. Raw memory this writer owns: touched only in
    /// `LogWriter+Unsafe.swift`.
    var gathered: UnsafeMutableRawBufferPointer?
    /// Bytes of ``gathered`` in use.
    var gatheredLength = 0
    private var gatheredStart: UInt64 { end - UInt64(gatheredLength) }
    /// Whether appends gather now: for good once ``gatherWrites(upTo:)`` ran, or from
    /// ``startGathering(upTo:)`` to ``stopGathering()``.
    private var isGathering = false

    /// From now on, frames are gathered and written `capacity` bytes at a time (a longer frame
    /// alone), and before ``syncAll()`` and ``trimToEnd()``. For a file written whole, where any
    /// error abandons the file (compaction, backup): its frames are half a page each, and one
    /// `pwrite` per frame made a close pay the kernel's per-call and per-page work for every frame
    /// (decision 39). A reader must not read this file's frames before ``writeGathered()``.
    func gatherWrites(upTo capacity: Int) {
        precondition(gathered == nil && capacity > 0, "gatherWrites once, with a capacity")
        gathered = LogWriter.allocateBuffer(byteCount: capacity)
        isGathering = true
    }

    /// Gathers frames, as ``gatherWrites(upTo:)`` does, until ``stopGathering()``: for the pages
    /// of a checkpoint on the live log, a few hundred bytes each when they are leaf deltas
    /// (decision 102). The caller treats a gathered frame as written only once
    /// ``writeGathered()`` (or ``stopGathering()``) returned: until then no reader may learn
    /// its offset, since a failed write takes it back (below).
    func startGathering(upTo capacity: Int) {
        precondition(!isGathering && capacity > 0, "startGathering while gathering")
        if gathered == nil { gathered = LogWriter.allocateBuffer(byteCount: capacity) }
        isGathering = true
    }

    /// Writes what was gathered and appends frame by frame again.
    func stopGathering() throws {
        defer { isGathering = false }
        try writeGathered()
    }

    /// Drops what was gathered (the log ends where it began again) and appends frame by frame
    /// again: for a caller that failed part way and uses none of the frames.
    func abandonGathering() {
        bytesWritten -= UInt64(gatheredLength)
        end -= UInt64(gatheredLength)
        gatheredLength = 0
        isGathering = false
    }

    /// Writes the frames gathered so far. If the write fails, they are dropped and the log ends
    /// where they began again: the next frame overwrites whatever part reached the file, as
    /// after any failed write.
    func writeGathered() throws {
        guard let frames = gatheredFrames, !frames.isEmpty else { return }
        let start = gatheredStart
        do {
            try write(frames, at: start)
        } catch {
            bytesWritten -= UInt64(gatheredLength)
            end = start
            gatheredLength = 0
            throw error
        }
        gatheredLength = 0
    }

    /// Set for `full` durability: grow the file by writing zeros, not by `ftruncate`. A
    /// truncate-grown file is sparse, so every commit's `fdatasync` must also journal the block
    /// allocation of the bytes it wrote; overwriting blocks that already exist is the cheap
    /// sync (SQLite's WAL gets it by reusing its file). Zeros cost one extra sequential write
    /// per megabyte of log, which durable commits (a few hundred bytes each) never notice.
    var preallocateWithZeros = false

    private func preallocate(through needed: UInt64) throws {
        guard needed > allocatedEnd else { return }
        let step = min(max(UInt64(1 << 20), allocatedEnd / 8), UInt64(64 << 20))
        let target = (needed + step - 1) / step * step
        do {
            if preallocateWithZeros {
                let zeros = [UInt8](repeating: 0, count: 1 << 16)
                // Frames are written right after: zero only the part beyond them.
                var at = max(allocatedEnd, needed)
                try zeros.withUnsafeBytes { zeroBytes in
                    while at < target {
                        let n = Int(min(UInt64(zeroBytes.count), target - at))
                        try file.write(UnsafeRawBufferPointer(rebasing: zeroBytes[..<n]), at: at)
                        at += UInt64(n)
                    }
                }
            } else {
                try file.truncate(to: target)
            }
            allocatedEnd = target
        } catch StrataError.diskFull {
            // Growth failing is not fatal by itself: the write will say whether it fits.
        }
    }

    /// Makes every frame appended so far durable.
    func syncAll() throws {
        try writeGathered()
        try sync.syncAll(file: file)
    }

    /// Another process appended frames up to `newEnd` (a store shared between processes): the
    /// next frame goes after them. What lies beyond is that process's to judge until this one
    /// holds the write lock and calls ``cutTail()``.
    func adoptEnd(_ newEnd: UInt64) {
        guard newEnd > end else { return }
        end = newEnd
        writebackFrom = newEnd
        allocatedEnd = max(allocatedEnd, newEnd)
    }

    /// Cuts whatever follows ``end`` (another process's preallocated zeros, or a frame it did not
    /// finish before it died), so nothing stale follows the next frame. Requires the write lock.
    func cutTail() throws {
        try file.truncate(to: end)
        allocatedEnd = end
    }

    /// Cuts preallocated zeros off the end (on close), so the file is exactly the log.
    func trimToEnd() throws {
        try writeGathered()
        guard allocatedEnd > end else { return }
        try file.truncate(to: end)
        allocatedEnd = end
    }
}
