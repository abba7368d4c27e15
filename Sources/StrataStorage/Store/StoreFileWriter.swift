/// Writes the parts of a store file that are not commits: a new file's first checkpoint and
/// header slot, checkpoint frames and header slots (FORMAT.md §2, §6, §9).
///
/// Recovery only reads; creation, checkpoints, compaction and backup write through here, so the
/// bytes of a header slot and of a checkpoint frame are produced in one place.
enum StoreFileWriter {
    /// Writes a new, empty store (an empty checkpoint, then header slot 0, each synced) under a
    /// temporary name and renames it into place, so a crash or I/O error during creation never
    /// leaves a half-made file at `path`.
    static func create(path: String, pageSize: Int, fs: any FileSystem) throws {
        let tmp = path + ".creating"
        try? fs.remove(tmp)
        let file = try fs.open(tmp, mode: .create)
        do {
            try file.truncate(to: 0)
            try initialize(file: file, path: tmp, pageSize: pageSize, fileID: randomFileID())
            file.close()
            try fs.rename(tmp, to: path)
        } catch {
            file.close()
            try? fs.remove(tmp)
            throw error
        }
        try fs.syncDirectory(containing: path)
    }

    /// Writes an empty store into `file`, which must be empty: the checkpoint of an empty
    /// catalog at the start of the log, synced, then header slot 0 pointing at it, synced.
    static func initialize(file: any StorageFile, path: String, pageSize: Int, fileID: UInt64) throws {
        let sync = SyncCoordinator(durableEnd: Format.logStart)
        let log = LogWriter(file: file, path: path, end: Format.logStart, allocatedEnd: 0, sync: sync)
        let (offset, length) = try writeCheckpoint(
            log: log, txid: 0, nextTreeID: 1, trees: [], liveBeforeFrame: Format.logStart)
        try log.trimToEnd()
        try log.syncAll()
        let header = FileHeader(pageSize: UInt32(pageSize), sequence: 1, checkpointOffset: offset,
                                durableEnd: offset + length, checkpointTxid: 0, fileID: fileID)
        try writeHeader(header, slot: 0, file: file)
    }

    /// A random identifier for a new file (FORMAT.md §2, "file id").
    static func randomFileID() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// Appends a checkpoint frame (never compressed) whose live-byte count includes the frame
    /// itself. Returns the frame's offset and length.
    static func writeCheckpoint(log: LogWriter, txid: UInt64, nextTreeID: UInt32, trees: [CheckpointRecord.TreeEntry],
                                liveBeforeFrame: UInt64) throws -> (UInt64, UInt64) {
        var record = CheckpointRecord(txid: txid, nextTreeID: nextTreeID, liveBytes: 0, trees: trees)
        let ownLength = FrameHeader.frameLength(storedLength: record.encode().count)
        record.liveBytes = liveBeforeFrame + ownLength
        return try record.encode().withUnsafeBytes {
            try log.append(.checkpoint, txid: txid, payload: $0, compress: false)
        }
    }

    /// Writes `header`'s 64 bytes into slot `slot` and syncs. The rest of the slot's block is
    /// zero from creation and never written.
    static func writeHeader(_ header: FileHeader, slot: Int, file: any StorageFile) throws {
        try writeHeaderSlot(header, slot: slot, file: file)
        try file.sync()
    }

    /// Writes `header` into slot `slot` without syncing: a checkpoint tells a failed write
    /// (nothing lost, the other slot still names the previous checkpoint) from a failed sync.
    static func writeHeaderSlot(_ header: FileHeader, slot: Int, file: any StorageFile) throws {
        var block = header.encode()
        block += [UInt8](repeating: 0, count: Format.slotLength - block.count)
        try file.write(block, at: FileHeader.slotOffset(slot))
    }
}
