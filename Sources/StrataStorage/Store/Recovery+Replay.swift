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

        init(nextTreeID: UInt32, lastTxid: UInt64) {
            self.nextTreeID = nextTreeID
            self.lastTxid = lastTxid
        }

        /// Space accounting for the replayed commits, exactly as their original commit did it.
        func liveDelta(reader: FrameReader, validEnd: UInt64) throws -> Int64 {
            var delta = Int64(overflowBytes)
            for m in touched {
                delta -= Int64(m.freedFrameBytes)
                for frame in m.freedOverflow {
                    if let h = try reader.header(at: frame, limit: validEnd) { delta -= Int64(h.frameLength) }
                }
            }
            return delta
        }
    }

    /// Applies every whole, checksum-valid commit frame from `start` on, in txid order, until the
    /// log ends; returns where it ends (the first offset that is not part of the log).
    static func replay(_ state: inout ReplayState, from start: UInt64, size: UInt64, reader: FrameReader, file: PageFile) throws -> UInt64 {
        var offset = start
        scan: while true {
            guard let h = try reader.header(at: offset, limit: size), let payload = try reader.payload(of: h, at: offset) else { break }
            switch h.type {
            case .commit:
                guard state.lastTxid < Recovery.replayOwner - 2, h.txid == state.lastTxid + 1 else {
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
                    if h.durableEnd >= first {
                        throw StrataError.corrupt("commit \(state.lastTxid + 1) is missing before durable commit \(h.txid)", offset: offset)
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
                    try apply(bytes, at: offset, to: &state, file: file)
                }
                state.lastTxid = h.txid
            case .checkpoint, .page, .overflow:
                // Pages and the frame of a checkpoint whose header slot was never written:
                // replaying the commits rebuilds the same state.
                break
            }
            offset += h.frameLength
        }
        return offset
    }

    private static func overflowIsValid(_ reader: FrameReader, _ frame: UInt64, length: Int, before limit: UInt64) throws -> Bool {
        guard frame >= Format.logStart, let h = try reader.header(at: frame, limit: limit), h.type == .overflow,
              Int(h.rawLength) == length else { return false }
        return try reader.payload(of: h, at: frame) != nil
    }

    /// Applies one commit record to the trees being rebuilt.
    static func apply(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, to state: inout ReplayState, file: PageFile) throws {
        let reader = FrameReader(file: file.file)
        try CommitRecordReader.forEach(bytes, fileOffset: offset) { op in
            func tree(_ id: UInt32) throws -> MutableTree {
                guard let t = state.byID[id] else { throw StrataError.corrupt("commit names unknown tree \(id)", offset: offset) }
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
                if let h = try reader.header(at: frame, limit: offset) { state.overflowBytes += h.frameLength }
            case .delete(let id, let key):
                let t = try tree(id)
                if let freed = try t.delete(key).overflow { t.freedOverflow.append(freed) }
            case .createTree(let id, let name):
                guard state.byID[id] == nil, state.trees[name] == nil, id >= state.nextTreeID else {
                    throw StrataError.corrupt("commit creates tree '\(name)' (\(id)) that exists", offset: offset)
                }
                let m = MutableTree(id: id, name: name, root: nil, count: 0, txid: replayOwner, file: file)
                state.trees[name] = m
                state.byID[id] = m
                state.touched.append(m)
                state.nextTreeID = id + 1
            case .dropTree(let id):
                let t = try tree(id)
                try t.dropAll()
                state.trees[t.name] = nil
                state.byID[id] = nil
            }
        }
    }
}
