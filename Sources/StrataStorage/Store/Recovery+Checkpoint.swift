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
            for tree in trees {
                state.trees[tree.name] = tree
                state.byID[tree.id] = tree
            }
            state.touched = trees
            return state
        }
    }

    static func loadCheckpoint(header: FileHeader, pageFile: PageFile) throws -> LoadedCheckpoint {
        let reader = FrameReader(file: pageFile.file)
        let frameOffset = header.checkpointOffset
        let (ckptHeader, ckptPayload) = try reader.read(at: frameOffset, expecting: .checkpoint,
                                                        maxRawLength: Format.maxRecordLength)
        let record = try ckptPayload.withUnsafeBytes { try CheckpointRecord.decode($0, fileOffset: frameOffset) }
        // Transaction ids count up from 0; the largest is reserved so that id + 1 never overflows.
        guard record.txid < Recovery.replayOwner - 1 else {
            throw StrataError.corrupt("checkpoint transaction id \(record.txid) out of range", offset: frameOffset)
        }
        guard record.txid == header.checkpointTxid, ckptHeader.txid == record.txid else {
            let (txid, inHeader, inFrame) = (record.txid, header.checkpointTxid, ckptHeader.txid)
            throw StrataError.corrupt("checkpoint txid \(txid) disagrees with header \(inHeader) or frame \(inFrame)",
                                      offset: frameOffset)
        }
        // Live bytes count the header region, frames before the checkpoint and the checkpoint
        // frame itself: nothing outside the file up to its end, and at least the two fixed parts.
        let end = frameOffset + ckptHeader.frameLength
        guard record.liveBytes >= Format.logStart + ckptHeader.frameLength, record.liveBytes <= end else {
            throw StrataError.corrupt("checkpoint claims \(record.liveBytes) live bytes, its frame ends at \(end)",
                                      offset: frameOffset)
        }
        var trees: [MutableTree] = []
        var ids = Set<UInt32>()
        for entry in record.trees {
            var root: Page?
            if entry.rootOffset != 0 {
                guard entry.rootOffset < header.checkpointOffset else {
                    throw StrataError.corrupt("root of '\(entry.name)' after its checkpoint", offset: entry.rootOffset)
                }
                root = try pageFile.page(at: entry.rootOffset, level: Int(entry.height) - 1)
            }
            let tree = MutableTree(id: entry.id, name: entry.name, root: root, count: entry.count, txid: replayOwner,
                                   file: pageFile)
            guard ids.insert(entry.id).inserted else {
                throw StrataError.corrupt("tree id \(entry.id) used twice", offset: header.checkpointOffset)
            }
            trees.append(tree)
        }
        return LoadedCheckpoint(record: record, frameLength: ckptHeader.frameLength, end: end, trees: trees)
    }
}
