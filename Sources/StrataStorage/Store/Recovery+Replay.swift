/// Recovery, step 3 (FORMAT.md §5, §8): replaying the commit frames after the checkpoint.
extension Recovery {
    /// The trees as replay rebuilds them, and what it needs for space accounting.
    struct ReplayState {
        var trees: [String: MutableTree] = [:]
        var byID: [UInt32: MutableTree] = [:]
        var nextTreeID: UInt32
        var lastTxid: UInt64
        /// Every tree replay may have changed (dropped ones included), for space accounting.
        var touched: [MutableTree] = []
        /// Bytes of the overflow frames the replayed commits wrote.
        var overflowBytes: UInt64 = 0
        /// Whether replay passed a checkpoint frame (another process's, when a shared store
        /// catches up: its header may name a newer checkpoint).
        var passedCheckpoint = false

        init(nextTreeID: UInt32, lastTxid: UInt64) {
            self.nextTreeID = nextTreeID
            self.lastTxid = lastTxid
        }

        /// Space accounting for the replayed commits, exactly as their original commit did it.
        func liveDelta(reader: FrameReader, validEnd: UInt64) throws -> Int64 {
            var delta = Int64(overflowBytes)
            for tree in touched {
                delta -= Int64(tree.freedFrameBytes)
                for frame in tree.freedOverflow {
                    if let frameHeader = try reader.header(at: frame, limit: validEnd) {
                        delta -= Int64(frameHeader.frameLength)
                    }
                }
            }
            return delta
        }
    }

    /// Where and why replay stopped.
    struct LogEnd {
        enum Reason {
            /// The bytes at `offset` are not a valid frame (or the file ends there).
            case invalidFrame
            /// A valid commit frame whose txid is not the next one, and nothing says the missing
            /// commit had been synced (FORMAT.md §8 step 4).
            case outOfSequence
        }
        var offset: UInt64
        var reason: Reason
    }

    /// Applies every valid commit frame from `start` on, in txid order, until the log ends;
    /// returns where it ends (the first offset that is not part of the log) and why.
    static func replay(_ state: inout ReplayState, from start: UInt64, size: UInt64, reader: FrameReader,
                       file: PageFile) throws -> LogEnd {
        var offset = start
        while true {
            guard let frameHeader = try reader.header(at: offset, limit: size),
                  let payload = try reader.payload(of: frameHeader, at: offset) else {
                return LogEnd(offset: offset, reason: .invalidFrame)
            }
            switch frameHeader.type {
            case .commit:
                guard state.lastTxid < Recovery.replayOwner - 2, frameHeader.txid == state.lastTxid + 1 else {
                    // Commits are consecutive, so one is missing before this valid transaction.
                    // If the transaction says every byte before its first frame had been synced
                    // (its overflow frames precede its commit frame), the missing commit was
                    // durable: that is damage, not a torn tail.
                    var first = offset
                    try? payload.withUnsafeBytes { bytes in
                        try CommitRecordReader.forEach(bytes, fileOffset: offset) { op in
                            if case .putOverflow(_, _, _, let frame) = op, frame >= start { first = min(first, frame) }
                        }
                    }
                    if frameHeader.durableEnd >= first {
                        let missing = state.lastTxid + 1
                        let durable = frameHeader.txid
                        throw StrataError.corrupt("commit \(missing) is missing before durable commit \(durable)",
                                                  offset: offset)
                    }
                    return LogEnd(offset: offset, reason: .outOfSequence)
                }
                try payload.withUnsafeBytes { bytes in
                    try apply(bytes, at: offset, to: &state, file: file)
                }
                state.lastTxid = frameHeader.txid
            case .checkpoint:
                state.passedCheckpoint = true
            case .page, .leafDelta, .overflow:
                // Pages and the frame of a checkpoint whose header slot was never written:
                // replaying the commits rebuilds the same state.
                break
            }
            offset += frameHeader.frameLength
        }
    }

    /// The overflow frame a commit at `commit` refers to must be a valid overflow frame of
    /// exactly `length` raw bytes lying wholly before the commit frame. Replay has found every
    /// frame before the commit valid and a writer writes a transaction's overflow frames before
    /// its commit frame, so a reference that does not resolve was written wrong: corrupt
    /// (FORMAT.md §8 step 3).
    private static func checkOverflow(_ reader: FrameReader, _ frame: UInt64, length: Int,
                                      commit: UInt64) throws -> UInt64 {
        guard frame >= Format.logStart, frame % UInt64(Format.frameAlignment) == 0,
              let frameHeader = try reader.header(at: frame, limit: commit), frameHeader.type == .overflow,
              UInt64(frameHeader.rawLength) == UInt64(length),
              try reader.payload(of: frameHeader, at: frame) != nil else {
            throw StrataError.corrupt(
                "commit refers to an overflow value of \(length) bytes at \(frame), and there is none", offset: commit)
        }
        return frameHeader.frameLength
    }

    /// Applies one commit record to the trees being rebuilt.
    static func apply(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, to state: inout ReplayState,
                      file: PageFile) throws {
        let reader = FrameReader(file: file.file)
        try CommitRecordReader.forEach(bytes, fileOffset: offset) { op in
            func knownTree(_ id: UInt32) throws -> MutableTree {
                guard let tree = state.byID[id] else {
                    throw StrataError.corrupt("commit names unknown tree \(id)", offset: offset)
                }
                return tree
            }
            switch op {
            case .put(let id, let key, let value):
                let tree = try knownTree(id)
                guard Format.leafCellHeader + key.count + value.count <= tree.inlineCellLimit else {
                    throw StrataError.corrupt("inline value too large for a leaf", offset: offset)
                }
                if let replaced = try tree.put(key, value, overflowLength: nil) { tree.freedOverflow.append(replaced) }
            case .putOverflow(let id, let key, let length, let frame):
                let tree = try knownTree(id)
                guard Format.leafCellHeader + key.count + length > tree.inlineCellLimit else {
                    throw StrataError.corrupt("overflow value of \(length) bytes small enough to be inline",
                                              offset: offset)
                }
                let frameLength = try checkOverflow(reader, frame, length: length, commit: offset)
                var reference = frame.littleEndian
                let replaced = try withUnsafeBytes(of: &reference) { try tree.put(key, $0, overflowLength: length) }
                if let replaced { tree.freedOverflow.append(replaced) }
                state.overflowBytes += frameLength
            case .delete(let id, let key):
                let tree = try knownTree(id)
                if let freed = try tree.delete(key).overflow { tree.freedOverflow.append(freed) }
            case .createTree(let id, let name):
                // Ids count up from the next tree id, which stays below 2^32 − 1 (FORMAT.md §6).
                guard state.byID[id] == nil, state.trees[name] == nil, id >= state.nextTreeID,
                      id < StoreLimits.treeIDLimit else {
                    let next = state.nextTreeID
                    throw StrataError.corrupt(
                        "commit creates tree '\(name)' (id \(id), next tree id \(next)) that exists or cannot",
                        offset: offset)
                }
                let tree = MutableTree(id: id, name: name, root: nil, count: 0, txid: replayOwner, file: file)
                state.trees[name] = tree
                state.byID[id] = tree
                state.touched.append(tree)
                state.nextTreeID = id + 1
            case .dropTree(let id):
                let tree = try knownTree(id)
                try tree.dropAll()
                state.trees[tree.name] = nil
                state.byID[id] = nil
            }
        }
    }
}
