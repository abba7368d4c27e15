/// Recovery, step 2 (FORMAT.md §6, §8): the checkpoint frame the header points at, and the
/// trees it lists.
extension Recovery {
    struct LoadedCheckpoint {
        var record: CheckpointRecord
        var frameLength: UInt64
        /// The offset right after the checkpoint frame: where replay starts.
        var end: UInt64
        /// Every tree of the catalog, its root page read (and checked) from the file.
        var trees: [MutableTree]

        /// The state replay starts from.
        func replayState(file: PageFile) -> ReplayState {
            var state = ReplayState(nextTreeID: record.nextTreeID, lastTxid: record.txid)
            for m in trees {
                state.trees[m.name] = m
                state.byID[m.id] = m
            }
            state.touched = trees
            return state
        }
    }

    static func loadCheckpoint(header: FileHeader, pageFile: PageFile) throws -> LoadedCheckpoint {
        let reader = FrameReader(file: pageFile.file)
        let (ckptHeader, ckptPayload) = try reader.read(at: header.checkpointOffset, expecting: .checkpoint, maxRawLength: Format.maxRecordLength)
        let record = try ckptPayload.withUnsafeBytes { try CheckpointRecord.decode($0, fileOffset: header.checkpointOffset) }
        // Transaction ids count up from 0; the largest is reserved so that id + 1 never overflows.
        guard record.txid < Recovery.replayOwner - 1 else {
            throw StrataError.corrupt("checkpoint transaction id \(record.txid) out of range", offset: header.checkpointOffset)
        }
        guard record.txid == header.checkpointTxid, ckptHeader.txid == record.txid else {
            throw StrataError.corrupt("checkpoint txid \(record.txid) disagrees with header \(header.checkpointTxid) or frame \(ckptHeader.txid)", offset: header.checkpointOffset)
        }
        // Live bytes count the header region, frames before the checkpoint and the checkpoint
        // frame itself: nothing outside the file up to its end, and at least the two fixed parts.
        let end = header.checkpointOffset + ckptHeader.frameLength
        guard record.liveBytes >= Format.logStart + ckptHeader.frameLength, record.liveBytes <= end else {
            throw StrataError.corrupt("checkpoint claims \(record.liveBytes) live bytes, its frame ends at \(end)", offset: header.checkpointOffset)
        }
        var trees: [MutableTree] = []
        var ids = Set<UInt32>()
        for t in record.trees {
            var root: Page?
            if t.rootOffset != 0 {
                guard t.rootOffset < header.checkpointOffset else {
                    throw StrataError.corrupt("root of '\(t.name)' after its checkpoint", offset: t.rootOffset)
                }
                root = try pageFile.page(at: t.rootOffset, level: Int(t.height) - 1)
            }
            let m = MutableTree(id: t.id, name: t.name, root: root, count: t.count, txid: replayOwner, file: pageFile)
            guard ids.insert(t.id).inserted else { throw StrataError.corrupt("tree id \(t.id) used twice", offset: header.checkpointOffset) }
            trees.append(m)
        }
        return LoadedCheckpoint(record: record, frameLength: ckptHeader.frameLength, end: end, trees: trees)
    }
}
