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
        let rebuilt = try rebuild(header: header, size: size, pageFile: pageFile, checkingTail: true,
                                  readOnly: !writable)
        let validEnd = rebuilt.logEnd
        let sync = SyncCoordinator(durableEnd: validEnd)
        var log: LogWriter?
        if writable {
            // Cut the torn tail (and any preallocated zeros) so nothing stale follows new frames.
            if size != validEnd { try file.truncate(to: validEnd) }
            try file.sync()
            log = LogWriter(file: file, path: path, end: validEnd, allocatedEnd: validEnd, sync: sync)
        }
        return Opened(version: rebuilt.version, log: log, sync: sync, header: header, headerSlot: slot,
                      checkpointFrame: rebuilt.checkpointFrame, liveAtCheckpoint: rebuilt.liveAtCheckpoint,
                      replayLiveDelta: rebuilt.replayLiveDelta, replayedBytes: rebuilt.replayedBytes,
                      logEnd: validEnd)
    }

    /// What ``rebuild(header:size:pageFile:checkingTail:readOnly:)`` rebuilt: the trees and the
    /// space accounting of the log as it is.
    struct Rebuilt {
        var version: Version
        var checkpointFrame: (offset: UInt64, length: UInt64)
        var liveAtCheckpoint: UInt64
        var replayLiveDelta: Int64
        var replayedBytes: UInt64
        var logEnd: UInt64
    }

    /// Steps 2 to 4 over a page file whose header was read: the checkpoint `header` names, the
    /// commits after it, and (with `checkingTail`) the judgement of what follows the log. A store
    /// shared between processes rebuilds this way from another process's checkpoint, over the
    /// page cache it has (pages are immutable by offset).
    static func rebuild(header: FileHeader, size: UInt64, pageFile: PageFile, checkingTail: Bool,
                        readOnly: Bool) throws -> Rebuilt {
        let checkpoint = try loadCheckpoint(header: header, pageFile: pageFile)
        var state = checkpoint.replayState(file: pageFile)
        let reader = FrameReader(file: pageFile.file)
        let end = try replay(&state, from: checkpoint.end, size: size, reader: reader, file: pageFile)
        let validEnd = end.offset
        let replayLiveDelta = try state.liveDelta(reader: reader, validEnd: validEnd)
        if checkingTail, validEnd < size {
            try checkTail(reader: reader, header: header, end: end, size: size, readOnly: readOnly)
        }
        var versionTrees: [String: Version.Tree] = [:]
        for (name, tree) in state.trees {
            versionTrees[name] = Version.Tree(id: tree.id, name: name, root: tree.root, count: tree.count)
        }
        let liveBytes = checkpoint.record.liveBytes
        let version = Version(txid: state.lastTxid, trees: versionTrees, nextTreeID: state.nextTreeID, file: pageFile,
                              deadBytesAtCommit: checkpoint.end > liveBytes ? checkpoint.end - liveBytes : 0)
        return Rebuilt(version: version, checkpointFrame: (header.checkpointOffset, checkpoint.frameLength),
                       liveAtCheckpoint: liveBytes, replayLiveDelta: replayLiveDelta,
                       replayedBytes: validEnd - checkpoint.end, logEnd: validEnd)
    }
}
