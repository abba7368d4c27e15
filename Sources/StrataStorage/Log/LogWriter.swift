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
    private var scratch: UnsafeMutableRawBufferPointer
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
        scratch = .allocate(byteCount: 64 << 10, alignment: 16)
    }

    deinit { scratch.deallocate() }

    private func ensureScratch(_ n: Int) {
        if scratch.count < n {
            scratch.deallocate()
            scratch = .allocate(byteCount: max(n, scratch.count * 2), alignment: 16)
        }
    }

    /// Throws ``StrataError/poisoned(cause:)`` once a sync of this file failed.
    func checkUsable() throws {
        if let failure = sync.failed { throw StrataError.poisoned(cause: failure) }
    }

    /// Appends one frame and returns its offset and total length. The payload is LZ4-compressed
    /// when `compress` is set and compression pays.
    @discardableResult
    func append(_ type: FrameType, txid: UInt64, payload: UnsafeRawBufferPointer, compress: Bool) throws -> (offset: UInt64, length: UInt64) {
        try checkUsable()
        // A longer payload would make a frame every reader refuses (and past 4 GiB its length
        // field could not hold it): refuse it before anything is written.
        guard payload.count <= type.maxRawLength else {
            throw StrataError.limitExceeded(what: "\(type) record", limit: UInt64(type.maxRawLength))
        }
        let header = Format.frameHeaderLength
        ensureScratch(header + LZ4.compressBound(payload.count) + Format.frameAlignment)
        var stored = payload.count
        var flags: UInt8 = 0
        let body = UnsafeMutableRawBufferPointer(rebasing: scratch[header...])
        if compress, let n = LZ4.compress(payload, into: body) {
            stored = n
            flags = Format.flagCompressed
        } else if let src = payload.baseAddress {
            body.baseAddress!.copyMemory(from: src, byteCount: payload.count)
        }
        let length = FrameHeader.frameLength(storedLength: stored)
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: body[..<stored]))
        let offset = end
        FrameHeader(type: type, flags: flags, storedLength: UInt32(stored), rawLength: UInt32(payload.count),
                    txid: txid, durableEnd: sync.durableEnd, payloadChecksum: crc).encode(into: scratch.baseAddress!, at: offset)
        // Zero the padding so the file's bytes are deterministic.
        let padded = Int(length)
        if padded > header + stored {
            (scratch.baseAddress! + header + stored).initializeMemory(as: UInt8.self, repeating: 0, count: padded - header - stored)
        }
        try preallocate(through: offset + length)
        try file.write(UnsafeRawBufferPointer(rebasing: scratch[..<padded]), at: offset)
        end = offset + length
        bytesWritten += length
        sync.noteWritten(end)
        if let stride = writebackStride, end - writebackFrom >= stride {
            file.startWriteback(at: writebackFrom, length: end - writebackFrom)
            writebackFrom = end
        }
        return (offset, length)
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
                try zeros.withUnsafeBytes { z in
                    while at < target {
                        let n = Int(min(UInt64(z.count), target - at))
                        try file.write(UnsafeRawBufferPointer(rebasing: z[..<n]), at: at)
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
    func syncAll() throws { try sync.syncAll(file: file) }

    /// Cuts preallocated zeros off the end (on close), so the file is exactly the log.
    func trimToEnd() throws {
        guard allocatedEnd > end else { return }
        try file.truncate(to: end)
        allocatedEnd = end
    }
}
