/// Opening a store file (FORMAT.md §8): pick the header slot, load the checkpoint, replay the
/// commits after it, and decide where the log ends. Each phase has its own file:
/// `Recovery+Header` (§8 step 1), `Recovery+Checkpoint` (step 2), `Recovery+Replay` (step 3),
/// `Recovery+Tail` (step 4). Recovery only reads, except that a writable open creates a missing
/// file and cuts a torn tail (step 5); the bytes of new files, checkpoints and header slots are
/// written by ``StoreFileWriter``.
enum Recovery {
    struct Opened {
        var version: Version
        var log: LogWriter?
        var sync: SyncCoordinator
        var header: FileHeader
        var headerSlot: Int
        var checkpointFrame: (offset: UInt64, length: UInt64)
        var liveAtCheckpoint: UInt64
        /// Live-byte change made by the replayed commits (as ``Store/liveDelta``).
        var replayLiveDelta: Int64
        var replayedBytes: UInt64
        /// Where the recovered log ends (a read-only handle reads no further).
        var logEnd: UInt64
    }

    /// The owner id of pages built by replay: no transaction ever has it.
    static let replayOwner = UInt64.max

    static func open(path: String, options: StoreOptions, fs: any FileSystem) throws -> Opened {
        let writable = !options.readOnly
        if !fs.fileExists(path) {
            guard writable, options.createIfMissing else { throw StrataError.fileNotFound(path: path) }
            try StoreFileWriter.create(path: path, pageSize: options.pageSize, fs: fs)
        } else if writable {
            // A compaction or creation that crashed before its rename leaves only a temporary file.
            try? fs.remove(path + ".compact")
            try? fs.remove(path + ".creating")
        }
        let file: any StorageFile
        do {
            file = try fs.open(path, mode: writable ? .readWrite : .readOnly)
        } catch StrataError.ioFailure(_, _, let code) where code == 2 {
            // Removed since `fileExists` looked (ENOENT).
            throw StrataError.fileNotFound(path: path)
        }
        do {
            return try recover(file: file, path: path, options: options, fs: fs)
        } catch {
            file.close()
            throw error
        }
    }

    /// The four phases of §8 over one open file.
    private static func recover(file: any StorageFile, path: String, options: StoreOptions,
                                fs: any FileSystem) throws -> Opened {
        let writable = !options.readOnly
        let (header, slot, size) = try readHeader(file: file, path: path, options: options)
        let pageFile = PageFile(file: file, path: path, pageSize: Int(header.pageSize), cacheBudget: options.cacheBytes)
        let checkpoint = try loadCheckpoint(header: header, pageFile: pageFile)
        var state = checkpoint.replayState(file: pageFile)
        let reader = FrameReader(file: file)
        let end = try replay(&state, from: checkpoint.end, size: size, reader: reader, file: pageFile)
        let validEnd = end.offset
        let replayLiveDelta = try state.liveDelta(reader: reader, validEnd: validEnd)
        if validEnd < size {
            try checkTail(reader: reader, header: header, end: end, size: size, readOnly: !writable)
        }

        let sync = SyncCoordinator(durableEnd: validEnd)
        var log: LogWriter?
        if writable {
            // Cut the torn tail (and any preallocated zeros) so nothing stale follows new frames.
            if size != validEnd { try file.truncate(to: validEnd) }
            try file.sync()
            log = LogWriter(file: file, path: path, end: validEnd, allocatedEnd: validEnd, sync: sync)
        }
        var versionTrees: [String: Version.Tree] = [:]
        for (name, tree) in state.trees {
            versionTrees[name] = Version.Tree(id: tree.id, name: name, root: tree.root, count: tree.count)
        }
        let liveBytes = checkpoint.record.liveBytes
        let version = Version(txid: state.lastTxid, trees: versionTrees, nextTreeID: state.nextTreeID, file: pageFile,
                              deadBytesAtCommit: checkpoint.end > liveBytes ? checkpoint.end - liveBytes : 0)
        return Opened(version: version, log: log, sync: sync, header: header, headerSlot: slot,
                      checkpointFrame: (header.checkpointOffset, checkpoint.frameLength),
                      liveAtCheckpoint: liveBytes, replayLiveDelta: replayLiveDelta,
                      replayedBytes: validEnd - checkpoint.end, logEnd: validEnd)
    }
}
