// Proves that FORMAT.md describes the bytes the engine writes.
//
// The decoder below reads store files through the reference codec (StrataTesting's
// `ReferenceFormat`: its own CRC-32C, its own LZ4 block decoder, its own parsing of header
// slots, frames, page images, checkpoints and commit records, written from FORMAT.md alone) and
// adds what needs the whole file: choosing the header slot, walking every tree, replay and the
// torn-tail scan (§8). It deliberately uses nothing from the engine but the public API (to
// produce files and to read back what the engine believes the store holds).
import Foundation
import StrataStorage
import Testing

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Decoder (from FORMAT.md only)

private typealias HeaderSlot = ReferenceFormat.HeaderSlot
private typealias Frame = ReferenceFormat.Frame

/// What the decoder found in a store file, as of the last applied commit.
private struct DecodedStore {
    /// The current header slot's index and fields.
    var currentSlot: Int
    var header: HeaderSlot
    var validSlots: Int
    var trees: [String: [[UInt8]: [UInt8]]]
    var checkpointTxid: UInt64
    var nextTreeID: UInt32
    var lastTxid: UInt64
    var replayedCommits: Int
    var skippedFramesAfterCheckpoint: Int
    var logEnd: Int
    var liveBytesRecorded: UInt64
    var liveBytesComputed: UInt64
    var checkpointFrameLength: Int
    var pagesVisited: Int
    /// Leaf delta frames reached from the roots (each read with its base, §4 "Leaf deltas").
    var leafDeltasVisited: Int
    var compressedPages: Int
    var overflowFromPages: Int
    var overflowFromCommits: Int
    var compressedOverflow: Int
    var compressedCommits: Int
    var maxHeight: Int
    /// Leaves whose frame offset is lower than that of the previous leaf in key order (same tree).
    var leafOrderInversions: Int
}

/// Keys compare as byte strings: memcmp, then shorter first (§4).
private func keyPrecedes(_ first: [UInt8], _ second: [UInt8]) -> Bool { ReferenceFormat.keyPrecedes(first, second) }

private struct FormatDecoder {
    let file: [UInt8]

    // §2: nil for a slot without the magic or with a checksum mismatch; a violation for a
    // checksum-valid slot of a newer version or with impossible fields.
    func slot(_ index: Int) throws -> HeaderSlot? {
        guard case .sealed(let slot) = HeaderSlot.read(file, slot: index) else { return nil }
        do {
            try slot.validate()
        } catch let violation as FormatViolation {
            throw FormatViolation("slot \(index): \(violation)")
        }
        return slot
    }

    /// The current slot (its index and fields) and the number of valid slots.
    func header() throws -> (slot: Int, fields: HeaderSlot, validSlots: Int) {
        guard file.count >= ReferenceFormat.logStart else {
            throw FormatViolation("file shorter than the 8192-byte header")
        }
        for index in 0..<2 {
            let start = HeaderSlot.start(ofSlot: index)
            let unused = (start + ReferenceFormat.slotLength)..<(start + ReferenceFormat.slotBlockSize)
            if file[unused].contains(where: { $0 != 0 }) {
                throw FormatViolation("slot \(index): bytes 64..<4096 are not zero")
            }
        }
        let valid = try (0..<2).compactMap { index in try slot(index).map { (index, $0) } }
        if valid.count == 2 {
            let (first, second) = (valid[0].1, valid[1].1)
            guard first.pageSize == second.pageSize, first.fileID == second.fileID,
                  first.sequence != second.sequence else {
                throw FormatViolation("the two valid slots disagree on page size or file id, or share a sequence")
            }
        }
        guard let (index, current) = valid.max(by: { $0.1.sequence < $1.1.sequence }) else {
            throw FormatViolation("no valid header slot")
        }
        guard current.checkpointOffset >= UInt64(ReferenceFormat.logStart),
              current.checkpointOffset < UInt64(file.count), current.durableEnd > current.checkpointOffset,
              current.durableEnd <= UInt64(file.count) else {
            throw FormatViolation("current slot's checkpoint offset \(current.checkpointOffset) or durable end "
                                  + "\(current.durableEnd) outside the file")
        }
        return (index, current, valid.count)
    }

    // §3
    func frame(at offset: Int) throws -> Frame { try Frame(in: file, at: offset) }

    /// Decodes the store as of the last applied commit (§8 steps 1–4).
    func decode() throws -> DecodedStore {
        let (currentSlot, h, validSlots) = try header()
        let pageSize = Int(h.pageSize)

        // §8.2 and §6: the checkpoint frame and its catalog.
        let cp = try frame(at: Int(h.checkpointOffset))
        guard cp.type == .checkpoint else { throw FormatViolation("frame at checkpoint offset has type \(cp.type)") }
        guard !cp.isCompressed else { throw FormatViolation("checkpoint frame is compressed") }
        guard cp.txid == h.checkpointTxid else {
            throw FormatViolation("checkpoint frame txid \(cp.txid) != header checkpoint txid \(h.checkpointTxid)")
        }
        let catalog = try ReferenceFormat.CheckpointRecord.decode(cp.payload)
        guard catalog.txid == cp.txid else {
            throw FormatViolation("catalog txid \(catalog.txid) != frame txid \(cp.txid)")
        }
        guard catalog.txid < UInt64.max - 1 else { throw FormatViolation("checkpoint txid \(catalog.txid)") }
        let nextTreeID = catalog.nextTreeID
        guard nextTreeID < UInt32.max else { throw FormatViolation("next tree id \(nextTreeID)") }
        let liveRecorded = catalog.liveBytes
        guard liveRecorded >= UInt64(ReferenceFormat.logStart + cp.length), liveRecorded <= UInt64(cp.end) else {
            throw FormatViolation(
                "checkpoint live bytes \(liveRecorded) outside \(ReferenceFormat.logStart + cp.length)...\(cp.end)")
        }

        var state = TreeWalkState(decoder: self, pageSize: pageSize, checkpointTxid: cp.txid)
        var trees: [UInt64: (name: String, entries: [[UInt8]: [UInt8]])] = [:]
        for entry in catalog.trees {
            let id = entry.id
            guard let name = entry.nameText, (1...255).contains(entry.name.count) else {
                throw FormatViolation("tree name of \(entry.name.count) bytes is not 1...255 bytes of UTF-8")
            }
            let root = entry.rootOffset
            let entryCount = entry.entryCount
            let height = Int(entry.height)
            guard id < nextTreeID else { throw FormatViolation("tree id \(id) >= next tree id \(nextTreeID)") }
            guard trees[UInt64(id)] == nil, !trees.values.contains(where: { $0.name == name }) else {
                throw FormatViolation("duplicate tree id \(id) or name \(name)")
            }
            var entries: [[UInt8]: [UInt8]] = [:]
            if root == 0 {
                guard height == 0, entryCount == 0 else {
                    throw FormatViolation("empty tree \(name) with height \(height), \(entryCount) entries")
                }
            } else {
                guard root < UInt64(cp.offset), height <= 32, entryCount <= 1 << 48 else {
                    throw FormatViolation("tree \(name): root \(root), height \(height), \(entryCount) entries")
                }
                var previous: [UInt8]? = nil
                state.lastLeafOffset = 0
                let rootLevel = try state.walk(offset: root, expectedLevel: nil, lower: nil, upper: nil,
                                               into: &entries, previous: &previous)
                guard height == rootLevel + 1 else {
                    throw FormatViolation("tree \(name): height \(height), root level \(rootLevel)")
                }
                guard UInt64(entries.count) == entryCount else {
                    throw FormatViolation(
                        "tree \(name): catalog says \(entryCount) entries, leaves hold \(entries.count)")
                }
            }
            trees[UInt64(id)] = (name, entries)
        }
        let liveComputed = UInt64(ReferenceFormat.logStart + state.liveFrames.values.reduce(0, +) + cp.length)
        // §6: the checkpoint frame is written after the page frames it refers to.
        if let last = state.liveFrames.max(by: { $0.key < $1.key }), last.key + last.value > cp.offset {
            throw FormatViolation("live frame at \(last.key) lies after the checkpoint frame at \(cp.offset)")
        }

        // §8.3: replay.
        var position = cp.end
        var lastTxid = cp.txid
        var nextID = UInt64(nextTreeID)
        var replayed = 0
        var skipped = 0
        var overflowFromCommits = 0
        var compressedOverflow = state.compressedOverflow
        var compressedCommits = 0
        replay: while position < file.count {
            guard let f = try? frame(at: position) else { break replay }
            switch f.type {
            case .page, .leafDelta, .overflow, .checkpoint:
                skipped += 1
            case .commit:
                guard f.txid == lastTxid + 1 else { break replay }
                let ops = try parseCommit(f, pageSize: pageSize)
                if f.isCompressed { compressedCommits += 1 }
                for op in ops {
                    switch op {
                    case .put(let id, let key, let value):
                        guard trees[id] != nil else {
                            throw FormatViolation("txid \(f.txid): put into unknown tree \(id)")
                        }
                        trees[id]!.entries[key] = value
                    case .delete(let id, let key):
                        guard trees[id] != nil else {
                            throw FormatViolation("txid \(f.txid): delete in unknown tree \(id)")
                        }
                        trees[id]!.entries[key] = nil
                    case .create(let id, let name):
                        guard trees[id] == nil, !trees.values.contains(where: { $0.name == name }), id >= nextID,
                              id < UInt64(UInt32.max) - 1 else {
                            throw FormatViolation("txid \(f.txid): create tree \(id) \(name) collides or is out of "
                                                  + "range (next tree id \(nextID))")
                        }
                        trees[id] = (name, [:])
                        nextID = id + 1
                    case .drop(let id):
                        guard trees.removeValue(forKey: id) != nil else {
                            throw FormatViolation("txid \(f.txid): drop of unknown tree \(id)")
                        }
                    case .overflowRead(let compressed):
                        overflowFromCommits += 1
                        if compressed { compressedOverflow += 1 }
                    }
                }
                lastTxid = f.txid
                replayed += 1
            }
            position = f.end
        }
        let logEnd = position

        // §8.4: torn tail or corruption.
        guard UInt64(logEnd) >= h.durableEnd else {
            throw FormatViolation("log ends at \(logEnd), before the header's durable end \(h.durableEnd)")
        }
        var scan = logEnd + ReferenceFormat.frameAlignment
        while scan <= file.count - ReferenceFormat.frameHeaderLength {
            if UInt32(file.littleEndian(at: scan, width: 4)) == ReferenceFormat.frameMagic,
               let f = try? frame(at: scan), f.durableEnd > UInt64(logEnd) {
                throw FormatViolation(
                    "valid frame at \(scan) claims durable end \(f.durableEnd) past the log end \(logEnd)")
            }
            scan += ReferenceFormat.frameAlignment
        }

        var out: [String: [[UInt8]: [UInt8]]] = [:]
        for t in trees.values { out[t.name] = t.entries }
        return DecodedStore(
            currentSlot: currentSlot, header: h, validSlots: validSlots, trees: out, checkpointTxid: cp.txid,
            nextTreeID: nextTreeID, lastTxid: lastTxid, replayedCommits: replayed,
            skippedFramesAfterCheckpoint: skipped, logEnd: logEnd, liveBytesRecorded: liveRecorded,
            liveBytesComputed: liveComputed,
            checkpointFrameLength: cp.length, pagesVisited: state.pagesVisited,
            leafDeltasVisited: state.leafDeltasVisited, compressedPages: state.compressedPages,
            overflowFromPages: state.overflowValues, overflowFromCommits: overflowFromCommits,
            compressedOverflow: compressedOverflow, compressedCommits: compressedCommits, maxHeight: state.maxLevel + 1,
            leafOrderInversions: state.leafOrderInversions)
    }

    /// A replayed operation, as the decoder applies it.
    enum Op {
        case put(UInt64, [UInt8], [UInt8])
        case delete(UInt64, [UInt8])
        case create(UInt64, String)
        case drop(UInt64)
        case overflowRead(compressed: Bool)
    }

    /// §5. Throws on a malformed payload, a broken limit, and (§8 step 3) an overflow reference
    /// that does not resolve.
    func parseCommit(_ f: Frame, pageSize: Int) throws -> [Op] {
        let operations: [ReferenceFormat.CommitRecord.Operation]
        do {
            operations = try ReferenceFormat.CommitRecord.decode(f.payload)
        } catch let violation as FormatViolation {
            throw FormatViolation("txid \(f.txid): \(violation)")
        }
        var ops: [Op] = []
        for operation in operations {
            switch operation {
            case .put(let id, let key, let value):
                // §4's inline rule, on both sides.
                let isInline = ReferenceFormat.isInline(keyLength: key.count, valueLength: value.count,
                                                        pageSize: pageSize)
                guard isInline else {
                    throw FormatViolation("txid \(f.txid): a \(value.count)-byte value inline")
                }
                ops.append(.put(id, key, value))
            case .putOverflow(let id, let key, let valueLength, let at):
                let isInline = ReferenceFormat.isInline(keyLength: key.count, valueLength: Int(valueLength),
                                                        pageSize: pageSize)
                guard !isInline else {
                    throw FormatViolation("txid \(f.txid): a \(valueLength)-byte value in an overflow frame")
                }
                guard at >= UInt64(ReferenceFormat.logStart), at < UInt64(f.offset), let o = try? frame(at: Int(at)),
                      o.type == .overflow, o.end <= f.offset, o.rawLength == Int(valueLength)
                else { throw FormatViolation("txid \(f.txid): overflow reference \(at) does not resolve") }
                guard o.txid == f.txid else {
                    throw FormatViolation("overflow frame \(at) has txid \(o.txid), commit \(f.txid) refers to it")
                }
                ops.append(.overflowRead(compressed: o.isCompressed))
                ops.append(.put(id, key, o.payload))
            case .delete(let id, let key):
                ops.append(.delete(id, key))
            case .createTree(let id, let nameBytes):
                guard let name = String(validating: nameBytes, as: UTF8.self) else {
                    throw FormatViolation("tree name not UTF-8")
                }
                ops.append(.create(id, name))
            case .dropTree(let id):
                ops.append(.drop(id))
            }
        }
        return ops
    }
}

/// §4: page images and the B+tree walk.
private struct TreeWalkState {
    let decoder: FormatDecoder
    let pageSize: Int
    let checkpointTxid: UInt64
    var liveFrames: [Int: Int] = [:]  // offset → frame length: page, leaf delta, base and overflow frames reachable
    var pagesVisited = 0
    var leafDeltasVisited = 0
    var compressedPages = 0
    var overflowValues = 0
    var compressedOverflow = 0
    var maxLevel = 0
    var lastLeafOffset = 0
    var leafOrderInversions = 0

    /// Walks the subtree whose root page frame (or, for a leaf, leaf delta frame) is at
    /// `offset`; returns its level.
    mutating func walk(offset: UInt64, expectedLevel: Int?, lower: [UInt8]?, upper: [UInt8]?,
                       into entries: inout [[UInt8]: [UInt8]], previous: inout [UInt8]?) throws -> Int {
        let f = try decoder.frame(at: Int(offset))
        guard f.type == .page || f.type == .leafDelta else {
            throw FormatViolation("child/root \(offset) is a \(f.type) frame")
        }
        guard f.txid <= checkpointTxid else {
            throw FormatViolation("\(f.type) frame \(offset) txid \(f.txid) > checkpoint \(checkpointTxid)")
        }
        guard liveFrames.updateValue(f.length, forKey: f.offset) == nil else {
            throw FormatViolation("\(f.type) \(offset) reached twice")
        }
        pagesVisited += 1
        if f.isCompressed { compressedPages += 1 }
        let image: ReferenceFormat.PageImage
        do {
            if f.type == .leafDelta {
                // §4 "Leaf deltas": the leaf it reads as, every page rule checked as if it were
                // stored in the delta frame; its base is live with it, and reached once.
                let resolved = try ReferenceFormat.LeafDelta.resolve(in: decoder.file, deltaFrame: f,
                                                                      pageSize: pageSize)
                guard resolved.base.txid <= checkpointTxid else {
                    throw FormatViolation("base \(resolved.base.offset) txid \(resolved.base.txid) > checkpoint")
                }
                guard liveFrames.updateValue(resolved.base.length, forKey: resolved.base.offset) == nil else {
                    throw FormatViolation("base \(resolved.base.offset) reached twice")
                }
                leafDeltasVisited += 1
                image = resolved.leaf
            } else {
                image = try ReferenceFormat.PageImage(f.payload, pageSize: pageSize)
                // Everything §4 asks of the page alone; the walk adds the bounds its parent sets.
                try image.validateCells(frameOffset: f.offset)
            }
        } catch let violation as FormatViolation {
            // A delta's violations already say which delta.
            throw f.type == .leafDelta ? violation : FormatViolation("page image at \(f.offset): \(violation)")
        }
        let level = image.level
        guard level < 32 else { throw FormatViolation("page \(offset): level \(level)") }
        if let e = expectedLevel, level != e { throw FormatViolation("page \(offset): level \(level), expected \(e)") }
        maxLevel = max(maxLevel, level)
        func inBounds(_ k: [UInt8]) -> Bool {
            (lower.map { !keyPrecedes(k, $0) } ?? true) && (upper.map { keyPrecedes(k, $0) } ?? true)
        }
        if image.isLeaf {
            guard level == 0 else { throw FormatViolation("leaf \(offset) at level \(level)") }
            if f.offset < lastLeafOffset { leafOrderInversions += 1 }
            lastLeafOffset = f.offset
            for i in 0..<image.count {
                let cell = try image.leafCell(i)
                let key = cell.key
                if let p = previous, !keyPrecedes(p, key) {
                    throw FormatViolation("leaf \(offset) cell \(i): keys not ascending")
                }
                guard inBounds(key) else {
                    throw FormatViolation("leaf \(offset) cell \(i): key outside its parent's range")
                }
                previous = key
                switch cell.value {
                case .overflow(let at):
                    guard at >= UInt64(ReferenceFormat.logStart), at < UInt64(f.offset) else {
                        throw FormatViolation("leaf \(offset) cell \(i): overflow offset \(at)")
                    }
                    let o = try decoder.frame(at: Int(at))
                    guard o.type == .overflow else {
                        throw FormatViolation("leaf \(offset) cell \(i): overflow offset \(at) is a \(o.type) frame")
                    }
                    guard o.rawLength == cell.valueLength else {
                        throw FormatViolation(
                            "overflow \(at): raw length \(o.rawLength) != value length \(cell.valueLength)")
                    }
                    guard o.txid <= checkpointTxid else {
                        throw FormatViolation("overflow \(at) txid \(o.txid) > checkpoint")
                    }
                    guard liveFrames.updateValue(o.length, forKey: o.offset) == nil else {
                        throw FormatViolation("overflow \(at) referenced twice")
                    }
                    overflowValues += 1
                    // §4: values are written before the pages that refer to them.
                    guard o.offset < f.offset else {
                        throw FormatViolation("leaf \(offset) cell \(i): overflow \(at) lies after the leaf")
                    }
                    if o.isCompressed { compressedOverflow += 1 }
                    entries[key] = o.payload
                case .inline(let value):
                    entries[key] = value
                }
            }
        } else {
            guard level > 0 else { throw FormatViolation("branch \(offset) at level 0") }
            guard image.count >= 1 else { throw FormatViolation("branch \(offset) with no cells") }
            var cells: [ReferenceFormat.PageImage.BranchCell] = []
            for i in 0..<image.count {
                let cell = try image.branchCell(i)
                if i > 0 {
                    guard inBounds(cell.key) else {
                        throw FormatViolation("branch \(offset) cell \(i): key outside range")
                    }
                    if i > 1, !keyPrecedes(cells[i - 1].key, cell.key) {
                        throw FormatViolation("branch \(offset): keys not ascending")
                    }
                }
                cells.append(cell)
            }
            for i in 0..<image.count {
                // §6/§9: children before parents.
                guard cells[i].child < UInt64(f.offset) else {
                    throw FormatViolation(
                        "branch \(offset) cell \(i): child \(cells[i].child) is not before its parent")
                }
                _ = try walk(offset: cells[i].child, expectedLevel: level - 1,
                             lower: i == 0 ? lower : cells[i].key,
                             upper: i + 1 < image.count ? cells[i + 1].key : upper,
                             into: &entries, previous: &previous)
            }
        }
        return level
    }
}

// MARK: - Workload (public API only)

private typealias Contents = [String: [[UInt8]: [UInt8]]]

private func readFile(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else { throw FormatViolation("cannot read \(path)") }
    return [UInt8](data)
}

private func decodeFile(_ path: String) throws -> DecodedStore {
    try FormatDecoder(file: try readFile(path)).decode()
}

/// Everything the engine returns through the public read API.
private func readBack(_ store: Store) throws -> Contents {
    try store.read { tx in
        var out: Contents = [:]
        for name in try tx.treeNames {
            var d: [[UInt8]: [UInt8]] = [:]
            for e in try tx.tree(name)!.entries() { d[e.key] = e.value }
            out[name] = d
        }
        return out
    }
}

/// A readable first difference (or nil).
private func difference(_ a: Contents, _ b: Contents) -> String? {
    if Set(a.keys) != Set(b.keys) { return "trees \(a.keys.sorted()) vs \(b.keys.sorted())" }
    for (name, x) in a.sorted(by: { $0.key < $1.key }) {
        let y = b[name]!
        if x == y { continue }
        for k in Set(x.keys).union(y.keys).sorted(by: keyPrecedes) where x[k] != y[k] {
            let keyText = String(decoding: k.prefix(12), as: UTF8.self)
            return "tree \(name) (\(x.count) vs \(y.count) keys): key \(keyText)… "
                + "value sizes \(x[k]?.count ?? -1) vs \(y[k]?.count ?? -1)"
        }
    }
    return nil
}

private func makeValue(_ rng: inout SeededRandom) -> [UInt8] {
    let n: Int
    switch Int.random(in: 0..<100, using: &rng) {
    case 0..<45: n = Int.random(in: 0...40, using: &rng)
    case 45..<75: n = Int.random(in: 41...400, using: &rng)
    case 75..<88: n = Int.random(in: 401...1100, using: &rng)  // around the 4 KiB-page inline limit
    default: n = Int.random(in: 1011...12_000, using: &rng)     // overflow (and 16 KiB pages' limit)
    }
    if Bool.random(using: &rng) { return randomBytes(n, &rng) }  // incompressible
    let phrase = Array("strata value \(Int.random(in: 0..<1000, using: &rng)); ".utf8)
    return (0..<n).map { phrase[$0 % phrase.count] }              // compressible
}

private func makeKey(_ rng: inout SeededRandom) -> [UInt8] {
    var k = key(Int.random(in: 0..<3000, using: &rng))
    if Int.random(in: 0..<40, using: &rng) == 0 {  // an occasional long key
        k += [UInt8](repeating: UInt8(ascii: "k"), count: Int.random(in: 50...900, using: &rng))
    }
    return k
}

/// Seeded commits through the public API, mirrored in a model. Checkpoints after the
/// transactions listed in `checkpointAfter`; the last transactions drop a tree, create one,
/// and drop and re-create one within a single transaction.
private func runWorkload(_ store: Store, seed: UInt64, transactions: Int = 50, opsPerTransaction: Int = 80,
                         checkpointAfter: Set<Int>) throws -> Contents {
    var rng = SeededRandom(seed: seed)
    var model: Contents = [:]
    var written: [String: [[UInt8]]] = [:]  // keys put, in order (deletes pick from these)
    try store.write { tx in
        for name in ["alpha", "beta", "gamma", "doomed"] {
            _ = try tx.treeCreatingIfMissing(name)
            model[name] = [:]
        }
    }
    for t in 0..<transactions {
        try store.write { tx in
            if t == transactions - 8 {
                try tx.dropTree("doomed")
                model["doomed"] = nil
            }
            if t == transactions - 6 {
                _ = try tx.treeCreatingIfMissing("late")
                model["late"] = [:]
            }
            if t == transactions - 4 {
                try tx.dropTree("beta")
                _ = try tx.createTree("beta")
                model["beta"] = [:]
                written["beta"] = []
            }
            let names = model.keys.sorted()
            for _ in 0..<opsPerTransaction {
                let name = names[Int.random(in: 0..<names.count, using: &rng)]
                let tree = try tx.tree(name)!
                if Int.random(in: 0..<10, using: &rng) < 7 || model[name]!.isEmpty {
                    let k = makeKey(&rng)
                    let v = makeValue(&rng)
                    try tree.put(k, v)
                    model[name]![k] = v
                    written[name, default: []].append(k)
                } else {
                    let candidates = written[name, default: []]
                    let k = candidates.isEmpty || Int.random(in: 0..<5, using: &rng) == 0
                        ? makeKey(&rng) : candidates[Int.random(in: 0..<candidates.count, using: &rng)]
                    try tree.delete(k)
                    model[name]![k] = nil
                }
            }
        }
        if checkpointAfter.contains(t) { try store.checkpoint() }
    }
    return model
}

private func options(pageSize: Int = 4096) -> StoreOptions {
    var o = StoreOptions(durability: .full)
    o.pageSize = pageSize
    o.checkpointLogBytes = 64 << 20  // only the explicit checkpoints (and close) happen
    o.checkpointDirtyBytes = 256 << 20
    o.compactOnCloseGarbageRatio = 1  // close leaves the log in place (compaction is tested explicitly)
    return o
}

// MARK: - Tests

@Suite struct FormatDecoderTests {
    @Test func decoderSelfCheck() throws {
        #expect(ReferenceFormat.CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        // Hand-made LZ4 block: 4 literals "abcd", match offset 4 length 8, then literals "xy".
        let block: [UInt8] = [0x44, 0x61, 0x62, 0x63, 0x64, 0x04, 0x00, 0x20, 0x78, 0x79]
        #expect(try ReferenceFormat.LZ4Block.decode(block, rawLength: 14) == Array("abcdabcdabcdxy".utf8))
        #expect(throws: FormatViolation.self) {
            // The same block with match offset 5: it points before the first byte decoded.
            let badOffset: [UInt8] = [0x44, 0x61, 0x62, 0x63, 0x64, 0x05, 0x00, 0x20, 0x78, 0x79]
            _ = try ReferenceFormat.LZ4Block.decode(badOffset, rawLength: 14)
        }
        var r = ReferenceFormat.ByteReader([0xE5, 0x8E, 0x26, 0x7F])
        #expect(try r.varint() == 624_485)
        #expect(try r.varint() == 127)
    }

    /// The reference codec's encoders, read back by its decoders: what the surgery and the
    /// forgery tests write is what FORMAT.md says.
    @Test func referenceEncodersRoundTrip() throws {
        for value: UInt64 in [0, 127, 128, 624_485, UInt64(UInt32.max), .max] {
            var reader = ReferenceFormat.ByteReader(ReferenceFormat.ByteWriter.varint(value))
            #expect(try reader.varint() == value && reader.isAtEnd)
        }
        var file = [UInt8](repeating: 0, count: ReferenceFormat.logStart)
        let slot = HeaderSlot(pageSize: 8192, sequence: 7, checkpointOffset: 8192, durableEnd: 8300, checkpointTxid: 3,
                              fileID: 42)
        let slot1 = HeaderSlot.start(ofSlot: 1)
        file.replaceSubrange(slot1..<(slot1 + ReferenceFormat.slotLength), with: slot.encoded())
        #expect(HeaderSlot.read(file, slot: 1) == .sealed(slot) && HeaderSlot.read(file, slot: 0) == .noMagic)
        file[HeaderSlot.position(of: .sequence, slot: 1)] ^= 1
        #expect(HeaderSlot.read(file, slot: 1) == .checksumMismatch)
        HeaderSlot.reseal(&file, slot: 1)
        var resealed = slot
        resealed.sequence = 6
        #expect(HeaderSlot.read(file, slot: 1) == .sealed(resealed))

        let operations: [ReferenceFormat.CommitRecord.Operation] = [
            .createTree(id: 1, name: bytes("t")), .put(tree: 1, key: bytes("k"), value: bytes("v")),
            .putOverflow(tree: 1, key: bytes("big"), valueLength: 5000, frameOffset: 8192),
            .delete(tree: 1, key: bytes("k")), .dropTree(id: 1),
        ]
        let record = ReferenceFormat.CommitRecord.encode(operations)
        #expect(try ReferenceFormat.CommitRecord.decode(record) == operations)
        let sites = ReferenceFormat.CommitRecord.sites(in: record, from: 0, to: record.count)
        #expect(sites.count == operations.count + 1)
        for case .overflowReference(let at) in sites { #expect(record.littleEndian(at: at, width: 8) == 8192) }
        file += ReferenceFormat.Frame.encoded(type: .commit, payload: record, txid: 4, durableEnd: 8192, at: file.count)
        let frame = try Frame(in: file, at: ReferenceFormat.logStart)
        #expect(frame.type == .commit && frame.payload == record && frame.end == file.count && frame.txid == 4)
        // The same frame 4096 bytes further on: its header checksum covers its old offset.
        #expect(throws: FormatViolation.self) {
            try Frame(in: [UInt8](repeating: 0, count: 4096) + file, at: 4096 + ReferenceFormat.logStart)
        }

        let catalog = ReferenceFormat.CheckpointRecord(txid: 4, nextTreeID: 3, liveBytes: 9000, trees: [
            .init(id: 1, name: bytes("t"), rootOffset: 8192, entryCount: 2, height: 1), .init(id: 2, name: bytes("é")),
        ])
        let payload = catalog.encoded()
        #expect(try ReferenceFormat.CheckpointRecord.decode(payload) == catalog)
        let places = ReferenceFormat.CheckpointRecord.entryPlaces(in: payload)
        #expect(places.map { payload.littleEndian(at: $0.rootOffsetPosition, width: 8) } == [8192, 0])
        #expect(throws: FormatViolation.self) {
            try ReferenceFormat.CheckpointRecord.decode(catalog.encoded(claimedTreeCount: 3))
        }

        // A leaf of two cells in a 4096-byte page: header, two slots, the cells packed at the end.
        // Each cell: key length 1, value info 1 (inline, one byte), the key, the value.
        let cells: [[UInt8]] = [[1, 0, 1, 0, 0, 0] + bytes("a") + bytes("x"),
                                [1, 0, 1, 0, 0, 0] + bytes("b") + bytes("y")]
        let cellStart = 4096 - cells.joined().count
        var image: [UInt8] = [1, 0, 2, 0] + ReferenceFormat.littleEndianBytes(UInt64(cellStart), width: 2) + [0, 0]
        image += ReferenceFormat.littleEndianBytes(UInt64(cellStart), width: 2)
            + ReferenceFormat.littleEndianBytes(UInt64(cellStart + cells[0].count), width: 2) + cells.joined()
        let page = try ReferenceFormat.PageImage(image, pageSize: 4096)
        try page.validateCells(frameOffset: 8192)
        #expect(try page.leafCell(1) == .init(key: bytes("b"), valueLength: 1, value: .inline(bytes("y"))))
        #expect(Array(page.expanded()[cellStart...]) == Array(cells.joined()))
        #expect(ReferenceFormat.PageImage.cellPlaces(in: image).map(\.cellPosition) == [12, 12 + cells[0].count])
    }

    /// §9 "Create": an empty catalog checkpoint at 8192, txid 0, next tree id 1, slot 0 sequence 1.
    @Test func freshStore() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("fresh.strata")
        let store = try Store(path: path, options: options())
        let decoded = try decodeFile(path)
        #expect(decoded.currentSlot == 0 && decoded.validSlots == 1 && decoded.header.sequence == 1)
        #expect(decoded.header.checkpointOffset == 8192 && decoded.checkpointTxid == 0 && decoded.nextTreeID == 1)
        #expect(decoded.header.durableEnd == 8192 + UInt64(decoded.checkpointFrameLength))
        #expect(decoded.liveBytesRecorded == decoded.liveBytesComputed)
        #expect(decoded.trees.isEmpty && decoded.replayedCommits == 0)
        try store.close()

        // The decoder is not vacuous: damage is noticed.
        var file = try readFile(path)
        let checkpointPayloadByte = ReferenceFormat.logStart + ReferenceFormat.frameHeaderLength + 3
        file[checkpointPayloadByte] ^= 0x01  // checkpoint payload → payload checksum mismatch
        #expect(throws: FormatViolation.self) { try FormatDecoder(file: file).decode() }
        file[checkpointPayloadByte] ^= 0x01
        // Slot 0's sequence: its checksum no longer matches, and no valid slot is left.
        file[HeaderSlot.position(of: .sequence, slot: 0) + 4] ^= 0x01
        #expect(throws: FormatViolation.self) { try FormatDecoder(file: file).decode() }
    }

    /// Open store, read while still open: checkpoint pages plus replayed commit frames.
    @Test(arguments: [4096, 16384])
    func openStoreDecodesToCommittedState(pageSize: Int) throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("open.strata")
        let store = try Store(path: path, options: options(pageSize: pageSize))
        let model = try runWorkload(store, seed: 0xF0_12A7 ^ UInt64(pageSize), checkpointAfter: [15, 30])

        let file = try readFile(path)  // store still open, never closed cleanly
        let decoded = try FormatDecoder(file: file).decode()
        #expect(file[decoded.logEnd...].allSatisfy { $0 == 0 }, "only zero preallocation after the last frame")
        #expect(decoded.header.durableEnd == decoded.header.checkpointOffset + UInt64(decoded.checkpointFrameLength))
        #expect(Int(decoded.header.pageSize) == pageSize)
        #expect(decoded.replayedCommits == 50 - 31, "commits after the last checkpoint are replayed")
        #expect(decoded.lastTxid == decoded.checkpointTxid + UInt64(decoded.replayedCommits))
        #expect(decoded.liveBytesComputed == decoded.liveBytesRecorded)
        #expect(decoded.overflowFromPages > 0 && decoded.overflowFromCommits > 0)
        #expect(decoded.compressedPages > 0 && decoded.compressedOverflow > 0)
        #expect(decoded.maxHeight >= 2)
        #expect(difference(decoded.trees, model) == nil)
        #expect(difference(decoded.trees, try readBack(store)) == nil)
        try store.close()
    }

    /// After a clean close the file ends with a checkpoint; nothing is left to replay.
    @Test func closedStoreDecodesToCommittedState() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("closed.strata")
        let model: Contents
        do {
            let store = try Store(path: path, options: options())
            model = try runWorkload(store, seed: 0xC105_ED, checkpointAfter: [20])
            try store.close()
        }
        let file = try readFile(path)
        let decoded = try FormatDecoder(file: file).decode()
        #expect(decoded.replayedCommits == 0)
        #expect(decoded.logEnd == file.count, "a clean close truncates to the end of the last frame")
        #expect(Int(decoded.header.checkpointOffset) + decoded.checkpointFrameLength == file.count)
        #expect(decoded.header.durableEnd == UInt64(file.count))
        #expect(decoded.liveBytesComputed == decoded.liveBytesRecorded)
        #expect(difference(decoded.trees, model) == nil)

        let reopened = try Store(path: path, options: options())
        #expect(difference(decoded.trees, try readBack(reopened)) == nil)
        try reopened.close()
    }

    /// compact() writes a new file: slot 0 only, pages, overflow values, one checkpoint.
    @Test func compactedStoreDecodesToCommittedState() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("compact.strata")
        let store = try Store(path: path, options: options())
        var model = try runWorkload(store, seed: 0xC0_4AC7, transactions: 40, checkpointAfter: [15])
        let headerBefore = try FormatDecoder(file: try readFile(path)).header().fields
        _ = try store.compact()

        let file = try readFile(path)
        let decoded = try FormatDecoder(file: file).decode()
        #expect(decoded.currentSlot == 0 && decoded.validSlots == 1)
        #expect(file[HeaderSlot.start(ofSlot: 1)..<ReferenceFormat.logStart].allSatisfy { $0 == 0 }, "slot 1 is zeroed")
        #expect(decoded.header.fileID == headerBefore.fileID, "compaction keeps the file id")
        #expect(decoded.header.sequence == headerBefore.sequence + 1, "slot 0 gets the next sequence")
        #expect(decoded.leafOrderInversions == 0, "§10: leaves are written in key order")
        // §10 and §4: overflow values come before their leaf (the decoder refuses anything else).
        // §10: header, then pages and overflow values, then one checkpoint frame, nothing else.
        let decoder = FormatDecoder(file: file)
        var position = ReferenceFormat.logStart
        var types: [ReferenceFrameType] = []
        while position < decoded.logEnd {
            let f = try decoder.frame(at: position)
            types.append(f.type)
            if f.type == .page { #expect(f.txid == decoded.checkpointTxid) }
            position = f.end
        }
        #expect(types.last == .checkpoint && types.dropLast().allSatisfy { $0 == .page || $0 == .overflow })
        #expect(decoded.replayedCommits == 0)
        #expect(decoded.header.checkpointOffset + UInt64(decoded.checkpointFrameLength) == UInt64(decoded.logEnd))
        #expect(decoded.liveBytesRecorded == UInt64(decoded.logEnd), "live bytes = the whole file")
        #expect(decoded.liveBytesComputed == decoded.liveBytesRecorded)
        #expect(difference(decoded.trees, model) == nil)

        // More commits on top of the compacted file are replayed from its log.
        var rng = SeededRandom(seed: 99)
        for _ in 0..<5 {
            try store.write { tx in
                let t = try tx.treeCreatingIfMissing("gamma")
                for _ in 0..<20 {
                    let k = makeKey(&rng), v = makeValue(&rng)
                    try t.put(k, v)
                    model["gamma", default: [:]][k] = v
                }
            }
        }
        let after = try decodeFile(path)
        #expect(after.replayedCommits == 5)
        #expect(difference(after.trees, model) == nil)
        #expect(difference(after.trees, try readBack(store)) == nil)
        try store.close()
    }

    /// The engine and this decoder agree on every forgery the generators make (header slots,
    /// pages, commit records, checkpoint records): the engine refuses each, and so does the
    /// decoder, from FORMAT.md alone; the unforged controls decode in both.
    @Test func engineAndDecoderRefuseTheSameForgeries() throws {
        var refused = 0
        func decoderRefuses(_ bytes: [UInt8], _ label: String) {
            do {
                _ = try FormatDecoder(file: bytes).decode()
                Issue.record("\(label): the engine refuses it, the decoder reads it")
            } catch is FormatViolation {
                refused += 1
            } catch {
                Issue.record("\(label): \(error)")
            }
        }
        // Header slots (the engine's verdicts: CorruptionTests.checksumValidSlotsWithImpossibleFieldsAreRefused).
        let fixture = try #require(CorruptionTests.fixtureOrNil)
        _ = try FormatDecoder(file: fixture.bytes).decode()
        for forgery in CorruptionTests.slotForgeries {
            for slot in 0...1 {
                let forged = CorruptionTests.forge(fixture.bytes, slot: slot, forgery)
                decoderRefuses(forged, "slot \(slot): \(forgery.name)")
            }
        }
        // Pages: the engine must find each corrupt, the decoder must refuse it.
        for forgery in ForgedPageTests.forgeries {
            let fs = SimulatedFileSystem()
            try ForgedPageTests.build(forgery, path: relPath, fs: fs)
            let bytes = try #require(fs.contents(of: relPath))
            let findings = ForgedPageTests.examine(forgery, path: relPath, fs: fs)
            #expect(!findings.corrupt.isEmpty && findings.wrong.isEmpty, "\(forgery): \(findings.wrong)")
            decoderRefuses(bytes, "page forgery \(forgery)")
        }
        // Commit records (the engine's verdicts: ForgedRecordTests).
        let control = SimulatedFileSystem()
        try ForgedRecordTests.storeWithCommits(fs: control) { o in
            [ForgedRecordTests.record { $0.putOverflow(1, bytes("k"), length: 3000, frame: o.large) },
             ForgedRecordTests.record { $0.create(2, bytes("u")) }]
        }
        let controlBytes = try #require(control.contents(of: relPath))
        #expect(try FormatDecoder(file: controlBytes).decode().trees.keys.sorted() == ["t", "u"])
        for (label, make) in ForgedRecordTests.commitForgeries {
            let fs = SimulatedFileSystem()
            try ForgedRecordTests.storeWithCommits(fs: fs) { o in
                make(o) + [ForgedRecordTests.record { $0.put(1, bytes("z"), bytes("9")) }]
            }
            decoderRefuses(try #require(fs.contents(of: relPath)), "commit: \(label)")
        }
        // Checkpoint records.
        let checkpointControl = SimulatedFileSystem()
        try ForgedRecordTests.storeWithCheckpoint(fs: checkpointControl) {
            ForgedRecordTests.checkpoint($0, names: [bytes("t"), bytes("u")])
        }
        let checkpointControlBytes = try #require(checkpointControl.contents(of: relPath))
        #expect(try FormatDecoder(file: checkpointControlBytes).decode().trees.keys.sorted() == ["t", "u"])
        for (label, make) in ForgedRecordTests.checkpointForgeries {
            let fs = SimulatedFileSystem()
            try ForgedRecordTests.storeWithCheckpoint(fs: fs, make)
            decoderRefuses(try #require(fs.contents(of: relPath)), "checkpoint: \(label)")
        }
        let compressed = SimulatedFileSystem()
        try ForgedRecordTests.storeWithCompressedCheckpoint(fs: compressed)
        decoderRefuses(try #require(compressed.contents(of: relPath)), "a compressed checkpoint frame")
        #expect(refused == 2 * CorruptionTests.slotForgeries.count + ForgedPageTests.forgeries.count
                + ForgedRecordTests.commitForgeries.count + ForgedRecordTests.checkpointForgeries.count + 1)
    }

    /// After close: every frame from 8192 is valid, they tile the file exactly, padding is zero.
    @Test func framesTileTheLogAfterClose() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("tile.strata")
        do {
            let store = try Store(path: path, options: options())
            _ = try runWorkload(store, seed: 0x711E, transactions: 30, checkpointAfter: [8, 18])
            try store.close()
        }
        let file = try readFile(path)
        let decoder = FormatDecoder(file: file)
        let (_, header, validSlots) = try decoder.header()
        #expect(validSlots == 2)
        var position = ReferenceFormat.logStart
        var counts: [UInt8: Int] = [:]
        var previousTxid: [UInt8: UInt64] = [:]
        var pendingPageTxids: [UInt64] = []
        while position < file.count {
            let f = try decoder.frame(at: position)
            counts[f.type.rawValue, default: 0] += 1
            let padding = file[(position + ReferenceFormat.frameHeaderLength + f.storedLength)..<f.end]
            #expect(padding.allSatisfy { $0 == 0 }, "padding of frame at \(position)")
            #expect(f.durableEnd <= UInt64(position), "frame at \(position) claims durable end \(f.durableEnd)")
            if f.type == .commit {
                #expect(f.txid == (previousTxid[2] ?? 0) + 1, "commit txids are consecutive")
                previousTxid[2] = f.txid
            }
            if f.type == .checkpoint {
                #expect(!f.isCompressed)
                // §3: page frames carry "the transaction the checkpoint captured".
                #expect(pendingPageTxids.allSatisfy { $0 == f.txid },
                        "page frames before checkpoint \(f.txid): \(Set(pendingPageTxids))")
                pendingPageTxids = []
            }
            if f.type == .page || f.type == .leafDelta { pendingPageTxids.append(f.txid) }
            if f.isCompressed {  // §3: stored raw unless LZ4 saves at least 1/16
                #expect(f.storedLength * 16 <= f.rawLength * 15,
                        "frame at \(position): \(f.storedLength) of \(f.rawLength)")
            }
            position = f.end
        }
        #expect(position == file.count)
        #expect(pendingPageTxids.isEmpty, "the file ends with a checkpoint")
        #expect(counts[1, default: 0] > 0 && counts[2, default: 0] == 31 && counts[3, default: 0] >= 4
                    && counts[4, default: 0] > 0,
                "frame counts by type \(counts)")
        #expect(Int(header.checkpointOffset) == position - (try decoder.frame(at: Int(header.checkpointOffset))).length)
    }
}

// MARK: - Leaf deltas in the reference codec alone (§4 "Leaf deltas", §2 and §13 versions)

private typealias LeafDelta = ReferenceFormat.LeafDelta
private typealias LeafCell = ReferenceFormat.PageImage.LeafCell

/// An inline leaf cell.
private func inlineCell(_ key: [UInt8], _ value: [UInt8]) -> LeafCell {
    LeafCell(key: key, valueLength: value.count, value: .inline(value))
}

/// A leaf cell whose `length`-byte value is in the overflow frame at `offset`.
private func overflowCell(_ key: [UInt8], length: Int, at offset: UInt64) -> LeafCell {
    LeafCell(key: key, valueLength: length, value: .overflow(offset))
}

/// The checked page image of a packed leaf of `cells`.
private func leaf(_ cells: [LeafCell], pageSize: Int = 4096) throws -> ReferenceFormat.PageImage {
    try ReferenceFormat.PageImage(ReferenceFormat.PageImage.leafImage(cells, pageSize: pageSize), pageSize: pageSize)
}

/// A branch image of one cell (no key) pointing at `child`, at level 1.
private func branchImage(child: UInt64, pageSize: Int = 4096) -> [UInt8] {
    let cell = ReferenceFormat.littleEndianBytes(0, width: 2) + ReferenceFormat.littleEndianBytes(child, width: 8)
    let cellStart = UInt64(pageSize - cell.count)
    return [ReferenceFormat.branchKind, 1] + ReferenceFormat.littleEndianBytes(1, width: 2)
        + ReferenceFormat.littleEndianBytes(cellStart, width: 2) + [0, 0]
        + ReferenceFormat.littleEndianBytes(cellStart, width: 2) + cell
}

/// A key of the delta tests: `k` and three digits, so byte order is numeric order.
private func numberedKey(_ number: Int) -> [UInt8] {
    var digits = String(number)
    while digits.count < 3 { digits = "0" + digits }
    return Array("k\(digits)".utf8)
}

/// A random delta for pages of `pageSize` bytes: 1 to 20 changes over ascending distinct keys,
/// puts inline or (one in six) in an overflow frame, deletes; its payload fits in the page.
private func randomDelta(_ rng: inout SeededRandom, pageSize: Int) -> LeafDelta {
    var keys = Set<[UInt8]>()
    for _ in 0..<rng.int(1...20) { keys.insert(rng.bytes(rng.int(1...40))) }
    let changes: [LeafDelta.Change] = keys.sorted(by: keyPrecedes).map { key in
        switch rng.below(6) {
        case 0:
            let inlineLimit = pageSize / 4 - ReferenceFormat.leafCellHeaderLength - key.count
            let length = rng.int((inlineLimit + 1)...(ReferenceFormat.maximumValueLength))
            let offset = UInt64(ReferenceFormat.logStart + 8 * rng.below(1 << 20))
            return .put(overflowCell(key, length: length, at: offset))
        case 1, 2:
            return .delete(key: key)
        default:
            return .put(inlineCell(key, rng.bytes(rng.int(0...60))))
        }
    }
    return LeafDelta(baseOffset: UInt64(8 * rng.below(1 << 40)), changes: changes)
}

extension FormatDecoderTests {
    /// §2, §13: a reader of version 2 reads a version-1 slot as it is, refuses a newer one, and
    /// there is no version 0.
    @Test func headerSlotVersions() throws {
        func slot(_ version: UInt32) -> HeaderSlot {
            HeaderSlot(formatVersion: version, pageSize: 4096, sequence: 1, checkpointOffset: 8192, durableEnd: 8300,
                       checkpointTxid: 0, fileID: 1)
        }
        #expect(ReferenceFormat.formatVersion == 2)
        try slot(1).validate()
        try slot(2).validate()
        #expect(!slot(1).isNewerVersion && !slot(2).isNewerVersion && slot(3).isNewerVersion)
        #expect(throws: FormatViolation.self) { try slot(3).validate() }
        #expect(throws: FormatViolation.self) { try slot(0).validate() }
        #expect(ReferenceFrameType(rawValue: 5) == .leafDelta && ReferenceFrameType(rawValue: 6) == nil)
        #expect(ReferenceFrameType.leafDelta.maximumRawLength == 32768)
    }

    /// A packed leaf image built from cells reads back as those cells, and is valid.
    @Test func leafImageRoundTrips() throws {
        let cells = [inlineCell(bytes("a"), bytes("x")), overflowCell(bytes("b"), length: 5000, at: 8192),
                     inlineCell(bytes("c"), [])]
        let image = try leaf(cells)
        try image.validateCells(frameOffset: 16384)
        #expect(try image.leafCells() == cells)
        #expect(image.bytes.count == ReferenceFormat.PageImage.leafImageLength(cells))
        #expect(try leaf([]).count == 0)
    }

    /// Forged deltas (random, seeded) round-trip through the encoder and the decoder, and the
    /// forging map finds every change where it is.
    @Test func leafDeltaRoundTrips() throws {
        let seed: UInt64 = 0x1EAF_DE17A
        var rng = SeededRandom(seed: seed)
        for round in 0..<300 {
            let pageSize = [4096, 8192, 16384, 32768][rng.below(4)]
            let delta = randomDelta(&rng, pageSize: pageSize)
            let payload = delta.encoded()
            let decoded = try LeafDelta.decode(payload, pageSize: pageSize)
            #expect(decoded == delta, "seed \(seed), round \(round)")
            let places = LeafDelta.changePlaces(in: payload)
            #expect(places.map(\.code) == delta.changes.map(\.code), "seed \(seed), round \(round)")
            #expect(places.last?.end == payload.count, "seed \(seed), round \(round)")
            for (place, change) in zip(places, delta.changes) {
                #expect(place.keyLength == change.key.count, "seed \(seed), round \(round)")
                if case .put(let cell) = change, case .overflow(let offset) = cell.value {
                    let at = try #require(place.overflowOffsetPosition, "seed \(seed), round \(round)")
                    #expect(payload.littleEndian(at: at, width: 8) == offset, "seed \(seed), round \(round)")
                } else {
                    #expect(place.overflowOffsetPosition == nil, "seed \(seed), round \(round)")
                }
            }
        }
        // One by hand, byte for byte: base 8192, a put of "a" = "xy", a delete of "b".
        let delta = LeafDelta(baseOffset: 8192, changes: [.put(inlineCell(bytes("a"), bytes("xy"))),
                                                          .delete(key: bytes("b"))])
        #expect(delta.encoded() == [0x00, 0x20, 0, 0, 0, 0, 0, 0, 2, 0,
                                    1, 1, 0, 2, 0, 0, 0, 0x61, 0x78, 0x79,
                                    2, 1, 0, 0x62])
    }

    /// Every rule FORMAT.md states about a delta payload itself, each broken once, is a
    /// violation; the unbroken control decodes.
    @Test func leafDeltaPayloadRulesAreEnforced() throws {
        let pageSize = 4096
        let control = LeafDelta(baseOffset: 8192, changes: [
            .put(inlineCell(bytes("a"), bytes("1"))), .delete(key: bytes("b")),
            .put(overflowCell(bytes("c"), length: 2000, at: 16384)), .delete(key: bytes("d")),
        ])
        _ = try LeafDelta.decode(control.encoded(), pageSize: pageSize)
        /// The control's payload with its first op byte replaced.
        func withFirstOp(_ code: UInt8) -> [UInt8] {
            var payload = control.encoded()
            payload[LeafDelta.changesPosition] = code
            return payload
        }
        func with(_ changes: [LeafDelta.Change]) -> [UInt8] { LeafDelta(baseOffset: 8192, changes: changes).encoded() }
        let longKey = [UInt8](repeating: 0x6B, count: 1025)
        let forgeries: [(String, [UInt8])] = [
            ("no changes", with([])),
            ("a count one above the changes", control.encoded(claimedCount: 5)),
            ("a count of 0xFFFF", control.encoded(claimedCount: 0xFFFF)),
            ("a count one below the changes (bytes left over)", control.encoded(claimedCount: 3)),
            ("a trailing byte", control.encoded() + [0]),
            ("a trailing zero op", control.encoded() + [0, 0, 0]),
            ("op 0", withFirstOp(0)),
            ("op 3", withFirstOp(3)),
            ("op 0xFF", withFirstOp(0xFF)),
            ("a put with key length 0", with([.put(inlineCell([], bytes("v")))])),
            ("a put with key length 1025", with([.put(overflowCell(longKey, length: 10, at: 8192))])),
            ("a delete with key length 0", with([.delete(key: [])])),
            ("a delete with key length 1025", with([.delete(key: longKey)])),
            ("a key length of 0xFFFF", {
                var payload = with([.delete(key: bytes("a"))])
                payload.setLittleEndian(0xFFFF, at: LeafDelta.changesPosition + 1, width: 2)
                return payload
            }()),
            ("a delete cut short", Array(control.encoded().dropLast())),
            ("a put cut short", Array(with([.put(inlineCell(bytes("a"), bytes("value")))]).dropLast())),
            ("an overflow put cut short", Array(with([.put(overflowCell(bytes("a"), length: 2000, at: 8192))])
                .dropLast(4))),
            ("only a base offset", Array(control.encoded().prefix(8))),
            ("a put and a delete of one key",
             with([.put(inlineCell(bytes("b"), bytes("1"))), .delete(key: bytes("b"))])),
            ("two puts of one key",
             with([.put(inlineCell(bytes("b"), bytes("1"))), .put(inlineCell(bytes("b"), bytes("2")))])),
            ("keys descending", with([.delete(key: bytes("c")), .delete(key: bytes("b"))])),
            ("a longer key before its prefix", with([.delete(key: bytes("ab")), .delete(key: bytes("a"))])),
            ("an inline value too long for a quarter page",
             with([.put(inlineCell(bytes("a"), [UInt8](repeating: 1, count: pageSize / 4 - 6)))])),
            ("an overflow value short enough to be inline",
             with([.put(overflowCell(bytes("a"), length: 10, at: 8192))])),
            ("a value length above 64 MiB",
             with([.put(overflowCell(bytes("a"), length: ReferenceFormat.maximumValueLength + 1, at: 8192))])),
            ("a payload longer than the page",
             with((0..<5).map { .delete(key: [UInt8](repeating: UInt8(0x61 + $0), count: 1000)) })),
        ]
        for (label, payload) in forgeries {
            #expect(throws: FormatViolation.self, "\(label)") { try LeafDelta.decode(payload, pageSize: pageSize) }
        }
        // The inline limit is exact: `6 + k + v ≤ P / 4` inline, one byte more in an overflow frame.
        let limit = pageSize / 4 - 6 - 1
        _ = try LeafDelta.decode(with([.put(inlineCell(bytes("a"), [UInt8](repeating: 1, count: limit)))]),
                                 pageSize: pageSize)
        _ = try LeafDelta.decode(with([.put(overflowCell(bytes("a"), length: limit + 1, at: 8192))]),
                                 pageSize: pageSize)
        // A key of 1024 bytes is allowed (its value then lies in an overflow frame).
        _ = try LeafDelta.decode(with([.delete(key: [UInt8](repeating: 1, count: 1024))]), pageSize: pageSize)
    }

    /// The leaf a delta reads as: puts replace or insert in key order, deletes remove, a delete
    /// of a missing key changes nothing; the result is a valid packed leaf.
    @Test func leafDeltaApplySemantics() throws {
        let deltaOffset = 1 << 20
        let base = try leaf([inlineCell(bytes("b"), bytes("old b")), inlineCell(bytes("d"), bytes("old d")),
                             overflowCell(bytes("f"), length: 3000, at: 8192)])
        func applied(_ changes: [LeafDelta.Change]) throws -> [LeafCell] {
            let result = try LeafDelta(baseOffset: 16384, changes: changes).apply(to: base, deltaOffset: deltaOffset)
            try result.validateCells(frameOffset: deltaOffset)
            #expect(result.isLeaf && result.level == 0)
            #expect(result.bytes == ReferenceFormat.PageImage.leafImage(try result.leafCells(), pageSize: 4096),
                    "the leaf is packed")
            return try result.leafCells()
        }
        let baseCells = try base.leafCells()
        #expect(try applied([.put(inlineCell(bytes("d"), bytes("new d")))])
                == [baseCells[0], inlineCell(bytes("d"), bytes("new d")), baseCells[2]], "a put replaces")
        #expect(try applied([.put(inlineCell(bytes("d"), [UInt8](repeating: 7, count: 900)))])[1].valueLength == 900,
                "a put replaces with a longer value")
        #expect(try applied([.put(inlineCell(bytes("a"), bytes("1"))), .put(inlineCell(bytes("c"), bytes("3"))),
                             .put(inlineCell(bytes("g"), bytes("7")))]).map(\.key)
                == ["a", "b", "c", "d", "f", "g"].map(bytes), "puts insert in key order, first, middle and last")
        #expect(try applied([.delete(key: bytes("b")), .delete(key: bytes("f"))]) == [baseCells[1]], "deletes remove")
        #expect(try applied([.delete(key: bytes("a")), .delete(key: bytes("c")), .delete(key: bytes("z"))])
                == baseCells, "a delete of a key the base lacks changes nothing")
        #expect(try applied([.delete(key: bytes("b")), .delete(key: bytes("d")), .delete(key: bytes("f"))]).isEmpty,
                "every cell deleted: an empty leaf")
        #expect(try applied([.put(overflowCell(bytes("b"), length: 5000, at: UInt64(deltaOffset - 8))),
                             .put(inlineCell(bytes("f"), bytes("inline now")))])
                == [overflowCell(bytes("b"), length: 5000, at: UInt64(deltaOffset - 8)), baseCells[1],
                    inlineCell(bytes("f"), bytes("inline now"))],
                "a put may move a value into or out of an overflow frame; its offset lies before the delta")

        // Random bases and deltas against a dictionary model.
        let seed: UInt64 = 0xDE17_A5EED
        var rng = SeededRandom(seed: seed)
        for round in 0..<300 {
            var model: [[UInt8]: [UInt8]] = [:]
            for _ in 0..<rng.int(0...50) { model[numberedKey(rng.below(120))] = rng.bytes(rng.below(30)) }
            let baseCells = model.keys.sorted(by: keyPrecedes).map { inlineCell($0, model[$0]!) }
            var changeKeys = Set<[UInt8]>()
            for _ in 0..<rng.int(1...30) { changeKeys.insert(numberedKey(rng.below(120))) }
            let changes: [LeafDelta.Change] = changeKeys.sorted(by: keyPrecedes).map { key in
                if rng.below(3) == 0 {
                    model[key] = nil
                    return .delete(key: key)
                }
                let value = rng.bytes(rng.below(30))
                model[key] = value
                return .put(inlineCell(key, value))
            }
            let delta = LeafDelta(baseOffset: 8192, changes: changes)
            let result = try delta.apply(to: try leaf(baseCells), deltaOffset: deltaOffset)
            let expected = model.keys.sorted(by: keyPrecedes).map { inlineCell($0, model[$0]!) }
            #expect(try result.leafCells() == expected, "seed \(seed), round \(round)")
            #expect(delta.applied(to: baseCells) == expected, "seed \(seed), round \(round)")
        }
    }

    /// The leaf a delta reads as obeys every page rule as if stored in the delta frame, and its
    /// base offset and base image obey theirs: each broken once is a violation.
    @Test func leafDeltaApplyViolations() throws {
        let deltaOffset = 65536
        let base = try leaf([inlineCell(bytes("b"), bytes("b")), inlineCell(bytes("d"), bytes("d"))])
        func refused(_ label: String, base: ReferenceFormat.PageImage = base, baseOffset: UInt64 = 16384,
                     _ changes: [LeafDelta.Change]) {
            #expect(throws: FormatViolation.self, "\(label)") {
                _ = try LeafDelta(baseOffset: baseOffset, changes: changes).apply(to: base, deltaOffset: deltaOffset)
            }
        }
        let put = LeafDelta.Change.put(inlineCell(bytes("c"), bytes("c")))
        _ = try LeafDelta(baseOffset: 16384, changes: [put]).apply(to: base, deltaOffset: deltaOffset)

        // Too large for P: three quarter-page cells (1024 bytes each), then a cell that fills
        // the page to the byte, and one a byte longer.
        let largest = [UInt8](repeating: 1, count: 1014)  // 6 + 4 + 1014 = P / 4
        let full = try leaf((0..<3).map { inlineCell(numberedKey($0), largest) })
        #expect(full.bytes.count == 8 + 2 * 3 + 3 * 1024)
        let fits = inlineCell(numberedKey(9), [UInt8](repeating: 2, count: 4096 - full.bytes.count - 2 - 6 - 4))
        let fitting = try LeafDelta(baseOffset: 16384, changes: [.put(fits)]).apply(to: full, deltaOffset: deltaOffset)
        #expect(fitting.bytes.count == 4096, "a leaf of exactly P bytes fits")
        var overfull = fits
        overfull.value = .inline([UInt8](repeating: 2, count: fits.valueLength + 1))
        overfull.valueLength += 1
        refused("an inserting put one byte past P", base: full, [.put(overfull)])
        refused("an inserting put far past P", base: full, [.put(inlineCell(numberedKey(3), largest))])
        // Four cells, the last one small; replacing it with a quarter-page value passes P.
        let almost = try leaf((0..<3).map { inlineCell(numberedKey($0), largest) } + [inlineCell(numberedKey(3), [])])
        refused("a replacing put that grows the leaf past P", base: almost,
                [.put(inlineCell(numberedKey(3), [UInt8](repeating: 3, count: 1000)))])
        _ = try LeafDelta(baseOffset: 16384, changes: [.delete(key: numberedKey(0)),
                                                       .put(inlineCell(numberedKey(3), largest))])
            .apply(to: almost, deltaOffset: deltaOffset)

        // Overflow offsets: multiples of 8, at least 8192, before the delta frame (not the base's).
        func overflowAt(_ offset: UInt64) -> [LeafDelta.Change] {
            [.put(overflowCell(bytes("c"), length: 2000, at: offset))]
        }
        _ = try LeafDelta(baseOffset: 16384, changes: overflowAt(UInt64(deltaOffset - 8)))
            .apply(to: base, deltaOffset: deltaOffset)
        _ = try LeafDelta(baseOffset: 16384, changes: overflowAt(32768)).apply(to: base, deltaOffset: deltaOffset)
        refused("an overflow offset at the delta frame", overflowAt(UInt64(deltaOffset)))
        refused("an overflow offset after the delta frame", overflowAt(UInt64(deltaOffset + 64)))
        refused("an overflow offset not a multiple of 8", overflowAt(UInt64(deltaOffset - 4)))
        refused("an overflow offset in the header", overflowAt(4096))
        refused("an overflow offset of 0", overflowAt(0))

        // The base offset: a multiple of 8, at least 8192, before the delta.
        refused("a base offset in the header", baseOffset: 4096, [put])
        refused("a base offset not a multiple of 8", baseOffset: 16388, [put])
        refused("a base offset at the delta", baseOffset: UInt64(deltaOffset), [put])
        refused("a base offset after the delta", baseOffset: UInt64(deltaOffset + 8), [put])
        refused("a base offset of 2^64 - 8", baseOffset: UInt64.max - 7, [put])

        // The base: a valid leaf image.
        refused("a branch base", base: try ReferenceFormat.PageImage(branchImage(child: 8192), pageSize: 4096), [put])
        refused("a base whose overflow offset is not before the base frame",
                base: try leaf([overflowCell(bytes("b"), length: 2000, at: 16384)]), [put])
        refused("a base whose keys descend",
                base: try leaf([inlineCell(bytes("d"), bytes("d")), inlineCell(bytes("b"), bytes("b"))]), [put])
        refused("a base breaking the inline rule",
                base: try leaf([overflowCell(bytes("b"), length: 3, at: 8192)]), [put])
    }

    /// A delta read against a file: its base must be a valid page frame holding a leaf — not a
    /// branch, an overflow frame, or another delta — and a tree node names a page or a delta.
    @Test func leafDeltaResolvesAgainstItsFile() throws {
        var file = [UInt8](repeating: 0, count: ReferenceFormat.logStart)
        func append(_ type: ReferenceFrameType, _ payload: [UInt8]) -> Int {
            let at = file.count
            file += ReferenceFormat.Frame.encoded(type: type, payload: payload, txid: 1, durableEnd: 8192, at: at)
            return at
        }
        let overflow = append(.overflow, [UInt8](repeating: 9, count: 2000))
        let baseCells = [inlineCell(bytes("a"), bytes("1")),
                         overflowCell(bytes("b"), length: 2000, at: UInt64(overflow))]
        let base = append(.page, ReferenceFormat.PageImage.leafImage(baseCells, pageSize: 4096))
        let branch = append(.page, branchImage(child: UInt64(base)))
        func delta(base: Int) -> [UInt8] {
            LeafDelta(baseOffset: UInt64(base), changes: [.delete(key: bytes("a")),
                                                           .put(inlineCell(bytes("c"), bytes("3")))]).encoded()
        }
        let good = append(.leafDelta, delta(base: base))
        let onDelta = append(.leafDelta, delta(base: good))
        let onBranch = append(.leafDelta, delta(base: branch))
        let onOverflow = append(.leafDelta, delta(base: overflow))
        let onNothing = append(.leafDelta, delta(base: base + 8))
        let commit = append(.commit, ReferenceFormat.CommitRecord.encode([.dropTree(id: 1)]))

        let node = try ReferenceFormat.TreeNode(in: file, at: good, pageSize: 4096)
        #expect(node.frame.type == .leafDelta && node.delta?.base.offset == base)
        #expect(node.frames.map(\.offset) == [good, base])
        #expect(try node.image.leafCells() == [baseCells[1], inlineCell(bytes("c"), bytes("3"))])
        let page = try ReferenceFormat.TreeNode(in: file, at: base, pageSize: 4096)
        #expect(page.delta == nil && page.frames.map(\.offset) == [base])
        for (label, offset) in [("a delta naming a delta", onDelta), ("a delta naming a branch", onBranch),
                                ("a delta naming an overflow frame", onOverflow),
                                ("a delta naming no frame", onNothing)] {
            #expect(throws: FormatViolation.self, "\(label)") {
                _ = try ReferenceFormat.TreeNode(in: file, at: offset, pageSize: 4096)
            }
        }
        #expect(throws: FormatViolation.self, "a commit frame as a tree node") {
            _ = try ReferenceFormat.TreeNode(in: file, at: commit, pageSize: 4096)
        }
    }
}
