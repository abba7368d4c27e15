/// Opening a store file: create it if new, pick the header slot, load the checkpoint, replay
/// the commits after it, and decide where the log ends (FORMAT.md, "Recovery").
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
            guard writable, options.createIfMissing else {
                throw StrataError.ioFailure(operation: "open", path: path, errno: 2)
            }
            try create(path: path, pageSize: options.pageSize, fs: fs)
        } else if writable {
            // A compaction or creation that crashed before its rename leaves only a temporary file.
            try? fs.remove(path + ".compact")
            try? fs.remove(path + ".creating")
        }
        // A read-only open races the writer's appends: a frame half-written when it was read
        // can be followed by complete ones by the time the tail is examined. Such a false
        // "corruption" disappears on a second look; real damage stays.
        var attempt = 0
        while true {
            let file = try fs.open(path, mode: writable ? .readWrite : .readOnly)
            do {
                return try recover(file: file, path: path, options: options, fs: fs)
            } catch StrataError.corrupt(let what, let offset) where !writable && attempt < 3 {
                file.close()
                attempt += 1
                _ = (what, offset)
            } catch {
                file.close()
                throw error
            }
        }
    }

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

    static func randomFileID() -> UInt64 {
        var g = SystemRandomNumberGenerator()
        return g.next()
    }

    /// Appends a checkpoint frame whose live-byte count includes the frame itself.
    static func writeCheckpoint(log: LogWriter, txid: UInt64, nextTreeID: UInt32,
                                trees: [CheckpointRecord.TreeEntry], liveBeforeFrame: UInt64) throws -> (UInt64, UInt64) {
        var record = CheckpointRecord(txid: txid, nextTreeID: nextTreeID, liveBytes: 0, trees: trees)
        let ownLength = FrameHeader.frameLength(storedLength: record.encode().count)
        record.liveBytes = liveBeforeFrame + ownLength
        return try record.encode().withUnsafeBytes {
            try log.append(.checkpoint, txid: txid, payload: $0, compress: false)
        }
    }

    static func writeHeader(_ header: FileHeader, slot: Int, file: any StorageFile) throws {
        var block = header.encode()
        block += [UInt8](repeating: 0, count: Format.slotLength - block.count)
        try file.write(block, at: FileHeader.slotOffset(slot))
        try file.sync()
    }

    private static func recover(file: any StorageFile, path: String, options: StoreOptions, fs: any FileSystem) throws -> Opened {
        let writable = !options.readOnly
        var size = try file.size()
        var (header, slot) = try chooseHeader(file: file, path: path, size: size)
        if header == nil {
            // A crash while creating the file leaves it empty or all zeros: start it afresh.
            guard writable else { throw StrataError.notAStrataFile(path: path) }
            try file.truncate(to: 0)
            try initialize(file: file, path: path, pageSize: options.pageSize, fileID: randomFileID())
            size = try file.size()
            (header, slot) = try chooseHeader(file: file, path: path, size: size)
        }
        guard let header else { throw StrataError.notAStrataFile(path: path) }
        let pageSize = Int(header.pageSize)
        guard pageSize >= 4096, pageSize <= Format.maxPageSize, pageSize & (pageSize - 1) == 0 else {
            throw StrataError.corrupt("header page size \(pageSize)", offset: 0)
        }
        guard header.checkpointOffset >= Format.logStart, header.checkpointOffset < size,
              header.durableEnd <= size, header.durableEnd > header.checkpointOffset else {
            throw StrataError.corrupt("header points outside the file (checkpoint \(header.checkpointOffset), durable end \(header.durableEnd), size \(size))", offset: 0)
        }
        let reader = FrameReader(file: file)
        let (ckptHeader, ckptPayload) = try reader.read(at: header.checkpointOffset, expecting: .checkpoint, maxRawLength: Format.maxRecordLength)
        let record = try ckptPayload.withUnsafeBytes { try CheckpointRecord.decode($0, fileOffset: header.checkpointOffset) }
        // Transaction ids count up from 0; the largest is reserved so that id + 1 never overflows.
        guard record.txid < Recovery.replayOwner - 1 else {
            throw StrataError.corrupt("checkpoint transaction id \(record.txid) out of range", offset: header.checkpointOffset)
        }
        guard record.txid == header.checkpointTxid else {
            throw StrataError.corrupt("checkpoint txid \(record.txid) disagrees with header \(header.checkpointTxid)", offset: header.checkpointOffset)
        }
        let pageFile = PageFile(file: file, path: path, pageSize: pageSize, cacheBudget: options.cacheBytes)
        var trees: [String: MutableTree] = [:]
        var byID: [UInt32: MutableTree] = [:]
        for t in record.trees {
            var root: Page?
            if t.rootOffset != 0 {
                guard t.rootOffset < header.checkpointOffset else {
                    throw StrataError.corrupt("root of '\(t.name)' after its checkpoint", offset: t.rootOffset)
                }
                root = try pageFile.page(at: t.rootOffset, level: Int(t.height) - 1)
            }
            let m = MutableTree(id: t.id, name: t.name, root: root, count: t.count, txid: replayOwner, file: pageFile)
            guard byID[t.id] == nil else { throw StrataError.corrupt("tree id \(t.id) used twice", offset: header.checkpointOffset) }
            trees[t.name] = m
            byID[t.id] = m
        }
        var nextTreeID = record.nextTreeID
        var lastTxid = record.txid
        var touched: [MutableTree] = Array(trees.values)
        var overflowBytes: UInt64 = 0
        let ckptEnd = header.checkpointOffset + ckptHeader.frameLength
        var offset = ckptEnd

        // Replay: every whole, checksum-valid commit frame, in txid order, until the log ends.
        scan: while true {
            guard let h = try reader.header(at: offset, limit: size), let payload = try reader.payload(of: h, at: offset) else { break }
            switch h.type {
            case .commit:
                guard lastTxid < Recovery.replayOwner - 2, h.txid == lastTxid + 1 else {
                    // Commits are consecutive, so one is missing before this valid transaction.
                    // If the transaction says every byte before its first frame had been synced
                    // (its overflow frames precede its commit frame), the missing commit was
                    // durable: that is damage, not a torn tail.
                    var first = offset
                    try? payload.withUnsafeBytes { bytes in
                        try CommitRecordReader.forEach(bytes, fileOffset: offset) { op in
                            if case .putOverflow(_, _, _, let frame) = op, frame >= ckptEnd { first = min(first, frame) }
                        }
                    }
                    if h.durableEnd >= first {
                        throw StrataError.corrupt("commit \(lastTxid + 1) is missing before durable commit \(h.txid)", offset: offset)
                    }
                    break scan
                }
                // A commit whose overflow frame did not survive is not whole: the log ends here.
                var whole = true
                try payload.withUnsafeBytes { bytes in
                    try CommitRecordReader.forEach(bytes, fileOffset: offset) { op in
                        if case .putOverflow(_, _, let length, let frame) = op {
                            if !(try overflowIsValid(reader, frame, length: length, before: offset)) { whole = false }
                        }
                    }
                }
                guard whole else { break scan }
                try payload.withUnsafeBytes { bytes in
                    try apply(bytes, at: offset, trees: &trees, byID: &byID, nextTreeID: &nextTreeID, file: pageFile,
                              touched: &touched, overflowBytes: &overflowBytes)
                }
                lastTxid = h.txid
            case .checkpoint, .page, .overflow:
                // Pages and the frame of a checkpoint whose header slot was never written:
                // replaying the commits rebuilds the same state.
                break
            }
            offset += h.frameLength
        }
        let validEnd = offset
        // Space accounting for the replayed commits, exactly as their original commit did it.
        var replayLiveDelta = Int64(overflowBytes)
        for m in touched {
            replayLiveDelta -= Int64(m.freedFrameBytes)
            for frame in m.freedOverflow {
                if let h = try reader.header(at: frame, limit: validEnd) { replayLiveDelta -= Int64(h.frameLength) }
            }
        }
        if validEnd < size { try checkTail(reader: reader, header: header, validEnd: validEnd, size: size) }

        let sync = SyncCoordinator(durableEnd: validEnd)
        var log: LogWriter?
        if writable {
            // Cut the torn tail (and any preallocated zeros) so nothing stale follows new frames.
            if size != validEnd { try file.truncate(to: validEnd) }
            try file.sync()
            log = LogWriter(file: file, path: path, end: validEnd, allocatedEnd: validEnd, sync: sync)
        }
        var versionTrees: [String: Version.Tree] = [:]
        for (name, m) in trees {
            versionTrees[name] = Version.Tree(id: m.id, name: name, root: m.root, count: m.count)
        }
        let version = Version(txid: lastTxid, trees: versionTrees, nextTreeID: nextTreeID, file: pageFile,
                              deadBytesAtCommit: ckptEnd > record.liveBytes ? ckptEnd - record.liveBytes : 0)
        return Opened(version: version, log: log, sync: sync, header: header, headerSlot: slot,
                      checkpointFrame: (header.checkpointOffset, ckptHeader.frameLength),
                      liveAtCheckpoint: record.liveBytes, replayLiveDelta: replayLiveDelta, replayedBytes: validEnd - ckptEnd, logEnd: validEnd)
    }

    /// The valid header slot with the higher sequence; `nil` header for an all-zero (new) file.
    private static func chooseHeader(file: any StorageFile, path: String, size: UInt64) throws -> (FileHeader?, Int) {
        var states: [FileHeader.SlotState] = []
        var allZero = true
        for slot in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: Format.slotLength)
            let n = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: FileHeader.slotOffset(slot)) }
            if bytes[..<n].contains(where: { $0 != 0 }) { allZero = false }
            states.append(bytes.withUnsafeBytes { FileHeader.decode($0) })
        }
        var best: (FileHeader, Int)?
        for (i, s) in states.enumerated() {
            if case .valid(let h) = s, best == nil || h.sequence > best!.0.sequence { best = (h, i) }
        }
        if let best { return (best.0, best.1) }
        for s in states {
            if case .newerVersion(let v) = s { throw StrataError.unsupportedFormatVersion(found: v, supported: Format.version) }
        }
        if states.contains(.damaged) { throw StrataError.corrupt("both header slots are damaged", offset: 0) }
        if allZero && size <= Format.logStart { return (nil, 0) }
        throw StrataError.notAStrataFile(path: path)
    }

    private static func overflowIsValid(_ reader: FrameReader, _ frame: UInt64, length: Int, before limit: UInt64) throws -> Bool {
        guard frame >= Format.logStart, let h = try reader.header(at: frame, limit: limit), h.type == .overflow,
              Int(h.rawLength) == length else { return false }
        return try reader.payload(of: h, at: frame) != nil
    }

    /// An invalid frame at `validEnd` ends the log only if nothing says the bytes there were
    /// durable: the header's durable end, or any later valid frame's durable end, beyond it.
    private static func checkTail(reader: FrameReader, header: FileHeader, validEnd: UInt64, size: UInt64) throws {
        if header.durableEnd > validEnd {
            throw StrataError.corrupt("invalid frame before the durable end \(header.durableEnd) the header records", offset: validEnd)
        }
        let chunk = 1 << 20
        var buffer = [UInt8](repeating: 0, count: chunk + Format.frameHeaderLength)
        var base = validEnd + UInt64(Format.frameAlignment)
        while base < size {
            let n = try buffer.withUnsafeMutableBytes { try reader.file.read(into: $0, at: base) }
            if n < 4 { break }
            var i = 0
            while i + 4 <= min(n, chunk) {
                let magic = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: i, as: UInt32.self) }
                if magic == Format.frameMagic.littleEndian {
                    let at = base + UInt64(i)
                    if let h = try reader.header(at: at, limit: size), h.durableEnd > validEnd,
                       try reader.payload(of: h, at: at) != nil {
                        throw StrataError.corrupt("invalid frame followed by a valid frame written after it was durable (at \(at))", offset: validEnd)
                    }
                }
                i += Format.frameAlignment
            }
            base += UInt64(chunk)
        }
    }

    /// Applies one commit record to the trees being rebuilt.
    static func apply(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, trees: inout [String: MutableTree],
                      byID: inout [UInt32: MutableTree], nextTreeID: inout UInt32, file: PageFile,
                      touched: inout [MutableTree], overflowBytes: inout UInt64) throws {
        let reader = FrameReader(file: file.file)
        try CommitRecordReader.forEach(bytes, fileOffset: offset) { op in
            func tree(_ id: UInt32) throws -> MutableTree {
                guard let t = byID[id] else { throw StrataError.corrupt("commit names unknown tree \(id)", offset: offset) }
                return t
            }
            switch op {
            case .put(let id, let key, let value):
                let t = try tree(id)
                guard Format.leafCellHeader + key.count + value.count <= t.inlineCellLimit else {
                    throw StrataError.corrupt("inline value too large for a leaf", offset: offset)
                }
                if let replaced = try t.put(key, value, overflowLength: nil) { t.freedOverflow.append(replaced) }
            case .putOverflow(let id, let key, let length, let frame):
                var ref = frame.littleEndian
                let t = try tree(id)
                if let replaced = try withUnsafeBytes(of: &ref, { try t.put(key, $0, overflowLength: length) }) {
                    t.freedOverflow.append(replaced)
                }
                if let h = try reader.header(at: frame, limit: offset) { overflowBytes += h.frameLength }
            case .delete(let id, let key):
                let t = try tree(id)
                if let freed = try t.delete(key).overflow { t.freedOverflow.append(freed) }
            case .createTree(let id, let name):
                guard byID[id] == nil, trees[name] == nil, id >= nextTreeID else {
                    throw StrataError.corrupt("commit creates tree '\(name)' (\(id)) that exists", offset: offset)
                }
                let m = MutableTree(id: id, name: name, root: nil, count: 0, txid: replayOwner, file: file)
                trees[name] = m
                byID[id] = m
                touched.append(m)
                nextTreeID = id + 1
            case .dropTree(let id):
                let t = try tree(id)
                try t.dropAll()
                trees[t.name] = nil
                byID[id] = nil
            }
        }
    }
}
