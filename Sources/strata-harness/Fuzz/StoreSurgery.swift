import StrataTesting

/// A store file's bytes mapped frame by frame (FORMAT.md §2–§6), with the surgery that puts a
/// forged field inside any page or leaf delta — compressed or not — behind valid checksums.
///
/// Page frames are mostly LZ4-compressed, so a forged page image rarely fits where the
/// original was. The surgery appends it instead, uncompressed, after the log, then appends a
/// copy of each ancestor pointing at the new child, and finally points the checkpoint's tree
/// entry at the new root (the checkpoint frame is never compressed) and re-seals it with its
/// live-bytes total adjusted. Recovery skips page and leaf delta frames found after the
/// checkpoint (§8), and every reader reaches pages by offset, so the store reads exactly like
/// the original except for the forged field. A leaf delta's base page frame has the delta as
/// its "parent": a forged base is appended, then a copy of the delta naming it, then the
/// delta's ancestors. Every byte is read and written through the reference codec
/// (``ReferenceFormat``): the surgery tests the engine, so it does not borrow its code.
struct StoreSurgery {
    typealias Frame = ReferenceFormat.Frame
    private typealias HeaderSlot = ReferenceFormat.HeaderSlot
    private typealias PageImage = ReferenceFormat.PageImage

    /// Where a page's parent keeps its offset.
    enum Parent {
        /// Cell `cell` of the branch page at frame offset `page`.
        case page(offset: Int, cell: Int)
        /// The root-offset field at absolute file position `at`, inside the checkpoint frame.
        case root(at: Int)
        /// The base offset of the leaf delta frame at `offset` (the parent of its base).
        case delta(offset: Int)
    }

    var bytes: [UInt8]
    /// The valid frames from the start of the log to its end, in order.
    var frames: [Frame] = []
    var logEnd = 0
    var checkpointOffset = 0
    var checkpointEnd = 0
    var pageSize = 4096
    /// By frame offset, for every page and leaf delta frame reachable from the checkpoint: the
    /// page image it reads as (a page frame's raw image; for a leaf delta, the leaf it
    /// describes). A delta's base page frame is here too, with its own image.
    var pageImages: [Int: [UInt8]] = [:]
    /// The raw payloads of the leaf delta frames reachable from the checkpoint, by frame offset.
    var deltaPayloads: [Int: [UInt8]] = [:]
    /// The base page frame's offset of each reachable leaf delta, by the delta's offset.
    var deltaBases: [Int: Int] = [:]
    var parents: [Int: Parent] = [:]
    /// The current header slot (0 or 1).
    var currentSlot = 0

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        var current: (slot: Int, fields: ReferenceFormat.HeaderSlot)?
        for slot in 0..<2 {
            guard case .sealed(let fields) = HeaderSlot.read(bytes, slot: slot) else { continue }
            if current.map({ fields.sequence > $0.fields.sequence }) ?? true { current = (slot, fields) }
        }
        guard let current else { throw ToolError("store surgery: no valid header slot") }
        currentSlot = current.slot
        checkpointOffset = Int(truncatingIfNeeded: current.fields.checkpointOffset)
        pageSize = Int(current.fields.pageSize)
        var offset = ReferenceFormat.logStart
        while let frame = try? Frame(in: bytes, at: offset) {
            frames.append(frame)
            offset = frame.end
        }
        logEnd = offset
        guard let checkpoint = frames.first(where: { $0.offset == checkpointOffset }),
              checkpoint.type == .checkpoint else {
            throw ToolError("store surgery: the header's checkpoint frame is not in the log")
        }
        checkpointEnd = checkpoint.end
        // Walk every tree from its root, recording each page's parent.
        let payloadStart = checkpointOffset + ReferenceFormat.frameHeaderLength
        for entry in ReferenceFormat.CheckpointRecord.entryPlaces(in: checkpoint.payload) {
            let root = Int(truncatingIfNeeded: checkpoint.payload.littleEndian(at: entry.rootOffsetPosition, width: 8))
            if root != 0 { try walk(root, parent: .root(at: payloadStart + entry.rootOffsetPosition)) }
        }
    }

    private mutating func walk(_ offset: Int, parent: Parent) throws {
        guard pageImages[offset] == nil else { return }
        let node: ReferenceFormat.TreeNode
        do {
            node = try ReferenceFormat.TreeNode(in: bytes, at: offset, pageSize: pageSize)
        } catch {
            throw ToolError("store surgery: no page or leaf delta at \(offset): \(error)")
        }
        pageImages[offset] = node.image.bytes
        parents[offset] = parent
        if let delta = node.delta {
            deltaPayloads[offset] = node.frame.payload
            deltaBases[offset] = delta.base.offset
            pageImages[delta.base.offset] = delta.base.payload
            parents[delta.base.offset] = .delta(offset: offset)
        }
        guard !node.image.isLeaf else { return }
        for cell in 0..<node.image.count {
            let child = Int(truncatingIfNeeded: try node.image.branchCell(cell).child)
            try walk(child, parent: .page(offset: offset, cell: cell))
        }
    }

    /// Makes the leaf delta frame at `offset` hold `payload` instead (see the type's comment):
    /// a leaf delta frame holding it is appended, with its ancestors. Returns the new bytes'
    /// offsets of the frames inserted, the forged delta's first.
    @discardableResult
    mutating func replaceDelta(at offset: Int, with payload: [UInt8]) throws -> [Int] {
        guard deltaPayloads[offset] != nil else { throw ToolError("store surgery: no leaf delta at \(offset)") }
        return try replaceNode(at: offset, type: .leafDelta, payload: payload)
    }

    /// Stores the leaf in the page frame at `offset` as a leaf delta holding `payload` (whose
    /// base offset is normally `offset`: the page frame stays, as the delta's base): a leaf
    /// delta frame holding it is appended, with its ancestors. For forging a store with deltas
    /// where the engine wrote none. Returns the new bytes' offsets of the frames inserted, the
    /// delta's first.
    @discardableResult
    mutating func storeAsDelta(leafAt offset: Int, payload: [UInt8]) throws -> [Int] {
        guard deltaPayloads[offset] == nil, pageImages[offset]?.first == ReferenceFormat.leafKind,
              let parent = parents[offset] else {
            throw ToolError("store surgery: no reachable leaf page frame at \(offset)")
        }
        if case .delta = parent { throw ToolError("store surgery: the page at \(offset) is already a base") }
        return try replaceNode(at: offset, type: .leafDelta, payload: payload, replacedStaysLive: true)
    }

    /// Makes the page at frame offset `offset` read as `image` (see the type's comment): a
    /// page frame holding it is appended, with its ancestors. `offset` may name a leaf delta
    /// (the leaf is then stored whole, and the delta's base is no longer reached) or a delta's
    /// base (a copy of the delta names the new base). Returns the new bytes' offsets of the
    /// frames inserted, the forged page's first.
    @discardableResult
    mutating func replacePage(at offset: Int, with image: [UInt8]) throws -> [Int] {
        try replaceNode(at: offset, type: .page, payload: image)
    }

    /// The surgery behind the replacements: the frame at `offset` and each ancestor appended
    /// anew, the first as `type` holding `payload`. `replacedStaysLive`: the frame at `offset`
    /// is still reached (as the new delta's base), so live bytes keep it.
    private mutating func replaceNode(at offset: Int, type: ReferenceFrameType, payload: [UInt8],
                                      replacedStaysLive: Bool = false) throws -> [Int] {
        // The forged frame and a copy of each ancestor, as raw frames placed where the
        // checkpoint frame is now; the checkpoint and everything after it move behind them.
        var inserted: [UInt8] = []
        var insertedAt: [Int] = []
        var replacedLength = 0
        var current = offset
        var newType = type
        var newPayload = payload
        var rootField: Int?
        while rootField == nil {
            guard let parent = parents[current], let replaced = frames.first(where: { $0.offset == current }) else {
                throw ToolError("store surgery: the page at \(current) is not reachable")
            }
            if !(replacedStaysLive && current == offset) { replacedLength += replaced.length }
            // A leaf delta stored whole no longer reaches its base.
            if newType == .page, let base = deltaBases[current],
               let baseFrame = frames.first(where: { $0.offset == base }) {
                replacedLength += baseFrame.length
            }
            let at = checkpointOffset + inserted.count
            inserted += Frame.encoded(type: newType, payload: newPayload, txid: replaced.txid,
                                      durableEnd: replaced.durableEnd, at: at)
            insertedAt.append(at)
            switch parent {
            case .root(let fieldAt):
                rootField = fieldAt
            case .page(let parentOffset, let cell):
                var parentImage = pageImages[parentOffset] ?? []
                let parentCell = PageImage.cellPlaces(in: parentImage)[cell]
                let childAt = parentCell.cellPosition + PageImage.BranchCell.childOffset
                parentImage.setLittleEndian(UInt64(at), at: childAt, width: 8)
                current = parentOffset
                newType = .page
                newPayload = parentImage
            case .delta(let deltaOffset):
                var deltaPayload = deltaPayloads[deltaOffset] ?? []
                deltaPayload.setLittleEndian(UInt64(at), at: ReferenceFormat.LeafDelta.baseOffsetPosition, width: 8)
                current = deltaOffset
                newType = .leafDelta
                newPayload = deltaPayload
            }
        }
        let delta = inserted.count
        /// Where a position at or after the old checkpoint lands.
        func moved(_ old: UInt64) -> UInt64 {
            old >= UInt64(checkpointOffset) && old <= UInt64(logEnd) ? old + UInt64(delta) : old
        }
        var out = Array(bytes[..<checkpointOffset]) + inserted
        // The checkpoint: the tree's new root, live bytes adjusted.
        var checkpoint = Array(bytes[checkpointOffset..<checkpointEnd])
        checkpoint.setLittleEndian(UInt64(insertedAt.last!), at: rootField! - checkpointOffset, width: 8)
        let liveAt = ReferenceFormat.frameHeaderLength + ReferenceFormat.CheckpointRecord.liveBytesPosition
        let live = Int64(bitPattern: checkpoint.littleEndian(at: liveAt, width: 8)) + Int64(delta - replacedLength)
        checkpoint.setLittleEndian(UInt64(bitPattern: live), at: liveAt, width: 8)
        // Every frame from the checkpoint on: its durable end and any overflow reference in a
        // (raw) commit record follow the move; both checksums are resealed at the new offset.
        let durableEndField = ReferenceFormat.FrameHeader.Field.durableEnd
        for frame in frames where frame.offset >= checkpointOffset {
            let at = out.count
            out += frame.offset == checkpointOffset ? checkpoint : Array(bytes[frame.offset..<frame.end])
            out.setLittleEndian(moved(out.littleEndian(at: at + durableEndField.offset, width: 8)),
                                at: at + durableEndField.offset, width: durableEndField.width)
            if frame.type == .commit && !frame.isCompressed {
                let payloadStart = at + ReferenceFormat.frameHeaderLength
                let payloadEnd = payloadStart + frame.storedLength
                let sites = ReferenceFormat.CommitRecord.sites(in: out, from: payloadStart, to: payloadEnd)
                for case .overflowReference(let referenceAt) in sites {
                    out.setLittleEndian(moved(out.littleEndian(at: referenceAt, width: 8)), at: referenceAt, width: 8)
                }
            }
            Frame.reseal(&out, frameAt: at)
        }
        out += bytes[logEnd...]
        // Both header slots: checkpoint offset and durable end.
        for slot in 0..<2 where HeaderSlot.read(out, slot: slot) != .noMagic {
            for field in [HeaderSlot.Field.checkpointOffset, .durableEnd] {
                let at = HeaderSlot.position(of: field, slot: slot)
                out.setLittleEndian(moved(out.littleEndian(at: at, width: field.width)), at: at, width: field.width)
            }
            HeaderSlot.reseal(&out, slot: slot)
        }
        bytes = out
        return insertedAt
    }
}
