import CLZ4
import StrataStorage

/// A store file's bytes mapped frame by frame (FORMAT.md §2–§6), with the surgery that puts a
/// forged field inside any page — compressed or not — behind valid checksums.
///
/// Page frames are mostly LZ4-compressed, so a forged page image rarely fits where the
/// original was. The surgery appends it instead, uncompressed, after the log, then appends a
/// copy of each ancestor pointing at the new child, and finally points the checkpoint's tree
/// entry at the new root (the checkpoint frame is never compressed) and re-seals it with its
/// live-bytes total adjusted. Recovery skips page frames found after the checkpoint (§8), and
/// every reader reaches pages by offset, so the store reads exactly like the original except
/// for the forged field. The tools decode frames themselves (liblz4 and their own CRC-32C):
/// they test the engine, so they do not borrow its code.
struct StoreSurgery {
    struct Frame {
        var offset: Int
        var length: Int
        var type: UInt8
        var flags: UInt8
        var stored: Int
    }

    /// Where a page's parent keeps its offset.
    enum Parent {
        /// Cell `cell` of the branch page at frame offset `page`.
        case page(offset: Int, cell: Int)
        /// The root-offset field at absolute file position `at`, inside the checkpoint frame.
        case root(at: Int)
    }

    /// One cell of a page image: the positions (in the image) of its slot and of its bytes.
    struct Cell {
        var slotAt: Int
        var at: Int
        var keyLength: Int
    }

    var bytes: [UInt8]
    var frames: [Frame] = []
    var logEnd = 0
    var checkpointOffset = 0
    var checkpointEnd = 0
    var pageSize = 4096
    /// The raw images of the pages reachable from the checkpoint, by frame offset.
    var pageImages: [Int: [UInt8]] = [:]
    var parents: [Int: Parent] = [:]
    /// The current header slot (0 or 1).
    var currentSlot = 0

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        var best: (seq: UInt64, slot: Int)?
        for slot in 0..<2 {
            let at = slot * 4096
            guard bytes.count >= at + 64, Array(bytes[at..<at + 8]) == Array("STRATADB".utf8),
                  readLE(bytes, at + 60, 4) == UInt64(ToolCRC32C.checksum(bytes, at..<at + 60)) else { continue }
            let seq = readLE(bytes, at + 16, 8)
            if best == nil || seq > best!.seq { best = (seq, slot) }
        }
        guard let best else { throw HarnessError("store surgery: no valid header slot") }
        currentSlot = best.slot
        checkpointOffset = Int(truncatingIfNeeded: readLE(bytes, best.slot * 4096 + 24, 8))
        pageSize = Int(readLE(bytes, best.slot * 4096 + 12, 4))
        var offset = 8192
        while let fr = StoreSurgery.frame(in: bytes, at: offset) {
            frames.append(fr)
            if fr.offset == checkpointOffset { checkpointEnd = fr.offset + fr.length }
            offset += fr.length
        }
        logEnd = offset
        guard checkpointEnd > 0 else { throw HarnessError("store surgery: the header's checkpoint frame is not in the log") }
        // Walk every tree from its root, recording each page's parent.
        let p = checkpointOffset + 40
        let count = Int(readLE(bytes, p + 20, 4))
        var q = p + 24
        for _ in 0..<count {
            let nameLength = Int(readLE(bytes, q + 4, 2))
            let rootAt = q + 6 + nameLength
            let root = Int(truncatingIfNeeded: readLE(bytes, rootAt, 8))
            if root != 0 { try walk(root, parent: .root(at: rootAt)) }
            q = rootAt + 17
        }
    }

    private mutating func walk(_ offset: Int, parent: Parent) throws {
        guard pageImages[offset] == nil else { return }
        let image = try StoreSurgery.pageImage(in: bytes, at: offset)
        pageImages[offset] = image
        parents[offset] = parent
        guard image[0] == 2 else { return }
        for (i, cell) in StoreSurgery.cells(of: image, pageSize: pageSize).enumerated() {
            let child = Int(truncatingIfNeeded: readLE(image, cell.at + 2, 8))
            try walk(child, parent: .page(offset: offset, cell: i))
        }
    }

    /// The valid frame at `offset` (header and payload checksums; no decompression), or `nil`.
    static func frame(in b: [UInt8], at offset: Int) -> Frame? {
        guard offset >= 0, offset + 40 <= b.count, readLE(b, offset, 4) == 0x4D52_4653,
              readLE(b, offset + 36, 4) == UInt64(ToolCRC32C.frameHeader(b, at: offset)) else { return nil }
        let type = b[offset + 4], flags = b[offset + 5]
        guard (1...4).contains(type), flags <= 1, b[offset + 6] == 0, b[offset + 7] == 0 else { return nil }
        let stored = Int(readLE(b, offset + 8, 4))
        let length = (40 + stored + 7) & ~7
        guard offset + length <= b.count,
              readLE(b, offset + 32, 4) == UInt64(ToolCRC32C.checksum(b, (offset + 40)..<(offset + 40 + stored))) else { return nil }
        return Frame(offset: offset, length: length, type: type, flags: flags, stored: stored)
    }

    /// The raw payload of the valid page frame at `offset`, decompressed when it is compressed.
    static func pageImage(in b: [UInt8], at offset: Int) throws -> [UInt8] {
        guard let fr = frame(in: b, at: offset), fr.type == 1 else { throw HarnessError("store surgery: no page frame at \(offset)") }
        let payload = Array(b[(offset + 40)..<(offset + 40 + fr.stored)])
        guard fr.flags & 1 != 0 else { return payload }
        let raw = Int(readLE(b, offset + 12, 4))
        var out = [UInt8](repeating: 0, count: raw)
        let n = payload.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                LZ4_decompress_safe(src.baseAddress!.assumingMemoryBound(to: CChar.self), dst.baseAddress!.assumingMemoryBound(to: CChar.self),
                                    Int32(src.count), Int32(dst.count))
            }
        }
        guard n == Int32(raw) else { throw HarnessError("store surgery: the page frame at \(offset) does not decompress") }
        return out
    }

    /// The cells of a page image in slot order (FORMAT.md §4); cells that do not fit are left out.
    static func cells(of image: [UInt8], pageSize: Int) -> [Cell] {
        guard image.count >= 8 else { return [] }
        let count = Int(readLE(image, 2, 2))
        let cellStart = Int(readLE(image, 4, 2))
        var out: [Cell] = []
        for i in 0..<count where 8 + 2 * i + 2 <= image.count {
            let slot = Int(readLE(image, 8 + 2 * i, 2))
            let at = 8 + 2 * count + (slot - cellStart)
            let minimum = image[0] == 2 ? 10 : 6
            guard slot >= cellStart, at >= 8 + 2 * count, at + minimum <= image.count else { continue }
            out.append(Cell(slotAt: 8 + 2 * i, at: at, keyLength: Int(readLE(image, at, 2))))
        }
        return out
    }

    /// A complete frame of `type` for `payload`, stored raw, sealed for file offset `offset`.
    static func makeFrame(type: UInt8, payload: [UInt8], txid: UInt64, durableEnd: UInt64, at offset: Int) -> [UInt8] {
        var f = [UInt8](repeating: 0, count: 40)
        writeLE(&f, 0, 4, 0x4D52_4653)
        f[4] = type
        writeLE(&f, 8, 4, UInt64(payload.count))
        writeLE(&f, 12, 4, UInt64(payload.count))
        writeLE(&f, 16, 8, txid)
        writeLE(&f, 24, 8, durableEnd)
        writeLE(&f, 32, 4, UInt64(ToolCRC32C.checksum(payload, 0..<payload.count)))
        f += payload
        writeLE(&f, 36, 4, UInt64(StoreSurgery.headerChecksum(f, at: offset)))
        while f.count % 8 != 0 { f.append(0) }
        return f
    }

    /// A frame header's checksum (FORMAT.md §3) when the frame starts at `offset` in the file;
    /// `frame` holds the frame from its first byte.
    static func headerChecksum(_ frame: [UInt8], at offset: Int) -> UInt32 {
        var sealed = Array(frame[0..<36])
        for i in 0..<8 { sealed.append(UInt8(truncatingIfNeeded: UInt64(offset) >> (8 * UInt64(i)))) }
        return ToolCRC32C.checksum(sealed, 0..<44)
    }

    /// Re-seals the frame at `offset` after its payload or header changed: payload checksum,
    /// then header checksum.
    mutating func reseal(frameAt offset: Int) {
        let stored = Int(readLE(bytes, offset + 8, 4))
        writeLE(&bytes, offset + 32, 4, UInt64(ToolCRC32C.checksum(bytes, (offset + 40)..<(offset + 40 + stored))))
        writeLE(&bytes, offset + 36, 4, UInt64(ToolCRC32C.frameHeader(bytes, at: offset)))
    }

    /// Re-seals header slot `slot` after a field changed.
    mutating func resealSlot(_ slot: Int) {
        writeLE(&bytes, slot * 4096 + 60, 4, UInt64(ToolCRC32C.checksum(bytes, slot * 4096..<slot * 4096 + 60)))
    }

    /// Makes the page at frame offset `offset` read as `image` (see the type's comment).
    /// Returns the new bytes' offsets of the frames inserted, the forged page's first.
    @discardableResult
    mutating func replacePage(at offset: Int, with image: [UInt8]) throws -> [Int] {
        // The forged page and a copy of each ancestor, as raw frames placed where the
        // checkpoint frame is now; the checkpoint and everything after it move behind them.
        var inserted: [UInt8] = []
        var insertedAt: [Int] = []
        var replacedLength = 0
        var current = offset
        var newImage = image
        var rootField: Int?
        while rootField == nil {
            guard let parent = parents[current] else { throw HarnessError("store surgery: the page at \(current) is not reachable") }
            replacedLength += frames.first { $0.offset == current }?.length ?? 0
            let at = checkpointOffset + inserted.count
            inserted += StoreSurgery.makeFrame(type: 1, payload: newImage, txid: readLE(bytes, current + 16, 8),
                                               durableEnd: readLE(bytes, current + 24, 8), at: at)
            insertedAt.append(at)
            switch parent {
            case .root(let fieldAt):
                rootField = fieldAt
            case .page(let parentOffset, let cell):
                var parentImage = pageImages[parentOffset] ?? []
                let cells = StoreSurgery.cells(of: parentImage, pageSize: pageSize)
                writeLE(&parentImage, cells[cell].at + 2, 8, UInt64(at))
                current = parentOffset
                newImage = parentImage
            }
        }
        let delta = inserted.count
        /// Where a position at or after the old checkpoint lands.
        func moved(_ old: UInt64) -> UInt64 { old >= UInt64(checkpointOffset) && old <= UInt64(logEnd) ? old + UInt64(delta) : old }
        var out = Array(bytes[..<checkpointOffset]) + inserted
        // The checkpoint: the tree's new root, live bytes adjusted.
        var checkpoint = Array(bytes[checkpointOffset..<checkpointEnd])
        writeLE(&checkpoint, rootField! - checkpointOffset, 8, UInt64(insertedAt.last!))
        let live = Int64(bitPattern: readLE(checkpoint, 40 + 12, 8)) + Int64(delta - replacedLength)
        writeLE(&checkpoint, 40 + 12, 8, UInt64(bitPattern: live))
        // Every frame from the checkpoint on: its durable end and any overflow reference in a
        // (raw) commit record follow the move; both checksums are resealed at the new offset.
        for fr in frames where fr.offset >= checkpointOffset {
            var frame = fr.offset == checkpointOffset ? checkpoint : Array(bytes[fr.offset..<(fr.offset + fr.length)])
            writeLE(&frame, 24, 8, moved(readLE(frame, 24, 8)))
            if fr.type == 2 && fr.flags == 0 { StoreSurgery.moveOverflowReferences(&frame, moved) }
            writeLE(&frame, 32, 4, UInt64(ToolCRC32C.checksum(frame, 40..<(40 + fr.stored))))
            writeLE(&frame, 36, 4, UInt64(StoreSurgery.headerChecksum(frame, at: out.count)))
            out += frame
        }
        out += bytes[logEnd...]
        // Both header slots: checkpoint offset and durable end.
        for slot in 0..<2 where Array(out[slot * 4096..<slot * 4096 + 8]) == Array("STRATADB".utf8) {
            writeLE(&out, slot * 4096 + 24, 8, moved(readLE(out, slot * 4096 + 24, 8)))
            writeLE(&out, slot * 4096 + 32, 8, moved(readLE(out, slot * 4096 + 32, 8)))
            writeLE(&out, slot * 4096 + 60, 4, UInt64(ToolCRC32C.checksum(out, slot * 4096..<slot * 4096 + 60)))
        }
        bytes = out
        return insertedAt
    }

    /// Applies `moved` to the overflow offsets of the put-overflow operations in a raw commit
    /// frame's payload (FORMAT.md §5).
    static func moveOverflowReferences(_ frame: inout [UInt8], _ moved: (UInt64) -> UInt64) {
        let end = 40 + Int(readLE(frame, 8, 4))
        var references: [Int] = []
        CommitOpWalk.forEach(in: frame, from: 40, to: min(end, frame.count)) { site in
            if case .overflowReference(let at) = site { references.append(at) }
        }
        for at in references { writeLE(&frame, at, 8, moved(readLE(frame, at, 8))) }
    }
}
