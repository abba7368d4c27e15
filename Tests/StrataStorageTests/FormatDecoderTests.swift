// Proves that FORMAT.md describes the bytes the engine writes.
//
// Everything below the "Decoder" mark was written from FORMAT.md alone: its own CRC-32C, its own
// LZ4 block decoder, its own parsing of header slots, frames, page images, checkpoints and commit
// records. It deliberately uses nothing from the engine but the public API (to produce files and
// to read back what the engine believes the store holds).
import Foundation
import StrataStorage
import Testing

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Decoder (from FORMAT.md only)

private struct FormatViolation: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `crc32c`: Castagnoli, reflected 0x82F63B78, init and final XOR 0xFFFFFFFF (FORMAT.md intro).
private let castagnoliTable: [UInt32] = (0..<256).map { i in
    var c = UInt32(i)
    for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
    return c
}

private func fdCRC32C(_ bytes: [UInt8], _ range: Range<Int>) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    castagnoliTable.withUnsafeBufferPointer { t in
        bytes.withUnsafeBufferPointer { p in
            for i in range { c = t[Int((c ^ UInt32(p[i])) & 0xFF)] ^ (c >> 8) }
        }
    }
    return c ^ 0xFFFF_FFFF
}

/// One LZ4 *block* (§3 "Compression"): sequences of token, literal-length extension, literals,
/// 2-byte LE offset, match-length extension (minimum match 4); the last sequence is literals only.
private func fdLZ4Decompress(_ src: [UInt8], rawLength: Int) throws -> [UInt8] {
    var out = [UInt8]()
    out.reserveCapacity(rawLength)
    var i = 0
    let end = src.count
    func extendLength(_ base: Int) throws -> Int {
        var n = base
        while true {
            guard i < end else { throw FormatViolation("LZ4: length extension runs past input") }
            let b = src[i]
            i += 1
            n += Int(b)
            guard n <= rawLength + 15 else { throw FormatViolation("LZ4: length exceeds raw length") }
            if b != 255 { return n }
        }
    }
    while true {
        guard i < end else { throw FormatViolation("LZ4: input ends before a token") }
        let token = src[i]
        i += 1
        var literals = Int(token >> 4)
        if literals == 15 { literals = try extendLength(15) }
        guard literals <= end - i else { throw FormatViolation("LZ4: literals run past input") }
        guard literals <= rawLength - out.count else { throw FormatViolation("LZ4: literals overflow raw length") }
        out.append(contentsOf: src[i..<(i + literals)])
        i += literals
        if i == end { break }  // last sequence: literals only
        guard end - i >= 2 else { throw FormatViolation("LZ4: truncated match offset") }
        let offset = Int(src[i]) | Int(src[i + 1]) << 8
        i += 2
        guard offset > 0, offset <= out.count else { throw FormatViolation("LZ4: bad match offset \(offset)") }
        var matchLength = Int(token & 0x0F)
        if matchLength == 15 { matchLength = try extendLength(15) }
        matchLength += 4
        guard matchLength <= rawLength - out.count else { throw FormatViolation("LZ4: match overflows raw length") }
        let start = out.count - offset
        for j in 0..<matchLength { out.append(out[start + j]) }  // byte by byte: overlap allowed
    }
    guard out.count == rawLength else {
        throw FormatViolation("LZ4: decoded \(out.count) bytes, raw length says \(rawLength)")
    }
    return out
}

/// Little-endian unsigned read of `n` bytes, bounds-checked.
private func fdLE(_ b: [UInt8], _ offset: Int, _ n: Int) throws -> UInt64 {
    guard offset >= 0, n <= 8, offset <= b.count - n else {
        throw FormatViolation("read of \(n) bytes at \(offset) is outside \(b.count) bytes")
    }
    var v: UInt64 = 0
    for k in 0..<n { v |= UInt64(b[offset + k]) << (8 * UInt64(k)) }
    return v
}

private struct FDReader {
    let bytes: [UInt8]
    var pos: Int
    let limit: Int
    init(_ bytes: [UInt8], from: Int = 0, limit: Int? = nil) {
        self.bytes = bytes
        pos = from
        self.limit = limit ?? bytes.count
    }
    var atEnd: Bool { pos == limit }
    private mutating func take(_ n: Int) throws -> Int {
        guard n >= 0, pos <= limit - n else { throw FormatViolation("read of \(n) bytes at \(pos) runs past \(limit)") }
        defer { pos += n }
        return pos
    }
    mutating func u8() throws -> UInt8 { bytes[try take(1)] }
    mutating func u16() throws -> Int { Int(try fdLE(bytes, try take(2), 2)) }
    mutating func u32() throws -> UInt32 { UInt32(try fdLE(bytes, try take(4), 4)) }
    mutating func u64() throws -> UInt64 { try fdLE(bytes, try take(8), 8) }
    mutating func bytes(_ n: Int) throws -> [UInt8] {
        let at = try take(n)
        return Array(bytes[at..<(at + n)])
    }
    /// LEB128, 7 bits per byte, low group first, at most 10 bytes (§5).
    mutating func varint() throws -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<10 {
            let b = try u8()
            if k == 9 && b > 1 { throw FormatViolation("varint overflows 64 bits") }
            v |= UInt64(b & 0x7F) << (7 * UInt64(k))
            if b & 0x80 == 0 { return v }
        }
        throw FormatViolation("varint longer than 10 bytes")
    }
    mutating func varintInt(max: UInt64) throws -> Int {
        let v = try varint()
        guard v <= max else { throw FormatViolation("varint \(v) exceeds \(max)") }
        return Int(v)
    }
}

private enum FDFrameType: UInt8 { case page = 1, commit = 2, checkpoint = 3, overflow = 4 }

private struct FDFrame {
    var offset: Int
    var type: FDFrameType
    var flags: UInt8
    var storedLength: Int
    var rawLength: Int
    var txid: UInt64
    var durableEnd: UInt64
    var payload: [UInt8]  // after decompression
    var length: Int { (40 + storedLength + 7) & ~7 }
    var end: Int { offset + length }
    var isCompressed: Bool { flags & 1 != 0 }
}

private struct FDHeader {
    var slot: Int
    var version: UInt32
    var pageSize: Int
    var sequence: UInt64
    var checkpointOffset: UInt64
    var durableEnd: UInt64
    var checkpointTxid: UInt64
    var fileID: UInt64
}

private struct FDResult {
    var header: FDHeader
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
    var compressedPages: Int
    var overflowFromPages: Int
    var overflowFromCommits: Int
    var compressedOverflow: Int
    var compressedCommits: Int
    var maxHeight: Int
    /// Leaves whose frame offset is lower than that of the previous leaf in key order (same tree).
    var leafOrderInversions: Int
}

private let fdMagicSlot: [UInt8] = Array("STRATADB".utf8)
private let fdMagicFrame: UInt32 = 0x4D52_4653

/// Keys compare as byte strings: memcmp, then shorter first (§4).
private func fdLess(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

private struct FormatDecoder {
    let file: [UInt8]

    // §2: nil for a slot without the magic or with a checksum mismatch; a violation for a
    // checksum-valid slot of a newer version or with impossible fields.
    func slot(_ index: Int) throws -> FDHeader? {
        let base = index * 4096
        guard Array(file[base..<(base + 8)]) == fdMagicSlot else { return nil }
        guard fdCRC32C(file, base..<(base + 60)) == UInt32(try fdLE(file, base + 60, 4)) else { return nil }
        let version = try fdLE(file, base + 8, 4)
        guard version <= 1 else { throw FormatViolation("slot \(index): format version \(version) is newer") }
        guard version == 1 else { throw FormatViolation("slot \(index): format version 0") }
        let p = try fdLE(file, base + 12, 4)
        guard p >= 4096, p <= 32768, p & (p - 1) == 0 else { throw FormatViolation("slot \(index): page size \(p)") }
        let h = FDHeader(
            slot: index,
            version: UInt32(try fdLE(file, base + 8, 4)),
            pageSize: Int(try fdLE(file, base + 12, 4)),
            sequence: try fdLE(file, base + 16, 8),
            checkpointOffset: try fdLE(file, base + 24, 8),
            durableEnd: try fdLE(file, base + 32, 8),
            checkpointTxid: try fdLE(file, base + 40, 8),
            fileID: try fdLE(file, base + 48, 8))
        guard try fdLE(file, base + 56, 4) == 0 else { throw FormatViolation("slot \(index): flags not 0") }
        return h
    }

    func header() throws -> (FDHeader, validSlots: Int) {
        guard file.count >= 8192 else { throw FormatViolation("file shorter than the 8192-byte header") }
        for s in 0..<2 where file[(s * 4096 + 64)..<(s * 4096 + 4096)].contains(where: { $0 != 0 }) {
            throw FormatViolation("slot \(s): bytes 64..<4096 are not zero")
        }
        let valid = try [slot(0), slot(1)].compactMap { $0 }
        if valid.count == 2 {
            guard valid[0].pageSize == valid[1].pageSize, valid[0].fileID == valid[1].fileID, valid[0].sequence != valid[1].sequence else {
                throw FormatViolation("the two valid slots disagree on page size or file id, or share a sequence")
            }
        }
        guard let current = valid.max(by: { $0.sequence < $1.sequence }) else {
            throw FormatViolation("no valid header slot")
        }
        guard current.checkpointOffset >= 8192, current.checkpointOffset < UInt64(file.count),
              current.durableEnd > current.checkpointOffset, current.durableEnd <= UInt64(file.count) else {
            throw FormatViolation("current slot's checkpoint offset \(current.checkpointOffset) or durable end \(current.durableEnd) outside the file")
        }
        return (current, valid.count)
    }

    // §3
    func frame(at offset: Int) throws -> FDFrame {
        guard offset >= 8192, offset % 8 == 0 else { throw FormatViolation("frame offset \(offset) not aligned in the log") }
        guard offset <= file.count - 40 else { throw FormatViolation("frame header at \(offset) past end of file") }
        guard UInt32(try fdLE(file, offset, 4)) == fdMagicFrame else { throw FormatViolation("bad frame magic at \(offset)") }
        // The header checksum runs over bytes 0..<36, then the frame's own offset as u64le.
        let position = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(offset) >> (8 * UInt64($0))) }
        guard fdCRC32C(Array(file[offset..<(offset + 36)]) + position, 0..<44) == UInt32(try fdLE(file, offset + 36, 4)) else {
            throw FormatViolation("bad header checksum at \(offset)")
        }
        guard let type = FDFrameType(rawValue: file[offset + 4]) else { throw FormatViolation("bad frame type at \(offset)") }
        let flags = file[offset + 5]
        guard flags & ~1 == 0 else { throw FormatViolation("unknown frame flags \(flags) at \(offset)") }
        guard !(type == .checkpoint && flags & 1 != 0) else { throw FormatViolation("compressed checkpoint frame at \(offset)") }
        guard try fdLE(file, offset + 6, 2) == 0 else { throw FormatViolation("reserved bytes not zero at \(offset)") }
        let stored = Int(try fdLE(file, offset + 8, 4))
        let raw = Int(try fdLE(file, offset + 12, 4))
        if flags & 1 == 0 {
            guard raw == stored else { throw FormatViolation("uncompressed frame with raw \(raw) != stored \(stored) at \(offset)") }
        } else {
            guard stored >= 1, raw <= 255 * stored else { throw FormatViolation("compressed lengths stored \(stored) raw \(raw) at \(offset)") }
        }
        let maxRaw = [FDFrameType.page: 32768, .commit: 1 << 30, .checkpoint: 1 << 30, .overflow: 64 << 20][type]!
        guard raw <= maxRaw else { throw FormatViolation("raw length \(raw) above \(maxRaw) for a \(type) frame at \(offset)") }
        let length = (40 + stored + 7) & ~7
        guard length <= file.count - offset else { throw FormatViolation("frame at \(offset) runs past end of file") }
        guard fdCRC32C(file, (offset + 40)..<(offset + 40 + stored)) == UInt32(try fdLE(file, offset + 32, 4)) else {
            throw FormatViolation("bad payload checksum at \(offset)")
        }
        let storedBytes = Array(file[(offset + 40)..<(offset + 40 + stored)])
        let payload = flags & 1 == 0 ? storedBytes : try fdLZ4Decompress(storedBytes, rawLength: raw)
        return FDFrame(
            offset: offset, type: type, flags: flags, storedLength: stored, rawLength: raw,
            txid: try fdLE(file, offset + 16, 8), durableEnd: try fdLE(file, offset + 24, 8), payload: payload)
    }

    /// Decodes the store as of the last applied commit (§8 steps 1–4).
    func decode() throws -> FDResult {
        let (h, validSlots) = try header()
        let pageSize = h.pageSize

        // §8.2 and §6: the checkpoint frame and its catalog.
        let cp = try frame(at: Int(h.checkpointOffset))
        guard cp.type == .checkpoint else { throw FormatViolation("frame at checkpoint offset has type \(cp.type)") }
        guard !cp.isCompressed else { throw FormatViolation("checkpoint frame is compressed") }
        guard cp.txid == h.checkpointTxid else {
            throw FormatViolation("checkpoint frame txid \(cp.txid) != header checkpoint txid \(h.checkpointTxid)")
        }
        var r = FDReader(cp.payload)
        let catalogTxid = try r.u64()
        guard catalogTxid == cp.txid else { throw FormatViolation("catalog txid \(catalogTxid) != frame txid \(cp.txid)") }
        guard catalogTxid < UInt64.max - 1 else { throw FormatViolation("checkpoint txid \(catalogTxid)") }
        let nextTreeID = try r.u32()
        guard nextTreeID < UInt32.max else { throw FormatViolation("next tree id \(nextTreeID)") }
        let liveRecorded = try r.u64()
        guard liveRecorded >= UInt64(8192 + cp.length), liveRecorded <= UInt64(cp.end) else {
            throw FormatViolation("checkpoint live bytes \(liveRecorded) outside \(8192 + cp.length)...\(cp.end)")
        }
        let treeCount = try r.u32()

        var state = TreeWalkState(decoder: self, pageSize: pageSize, checkpointTxid: cp.txid)
        var trees: [UInt64: (name: String, entries: [[UInt8]: [UInt8]])] = [:]
        for _ in 0..<treeCount {
            let id = try r.u32()
            let nameLength = try r.u16()
            guard (1...255).contains(nameLength) else { throw FormatViolation("tree name length \(nameLength)") }
            guard let name = String(validating: try r.bytes(nameLength), as: UTF8.self) else {
                throw FormatViolation("tree name is not UTF-8")
            }
            let root = try r.u64()
            let entryCount = try r.u64()
            let height = Int(try r.u8())
            guard id < nextTreeID else { throw FormatViolation("tree id \(id) >= next tree id \(nextTreeID)") }
            guard trees[UInt64(id)] == nil, !trees.values.contains(where: { $0.name == name }) else {
                throw FormatViolation("duplicate tree id \(id) or name \(name)")
            }
            var entries: [[UInt8]: [UInt8]] = [:]
            if root == 0 {
                guard height == 0, entryCount == 0 else { throw FormatViolation("empty tree \(name) with height \(height), \(entryCount) entries") }
            } else {
                guard root < UInt64(cp.offset), height <= 32, entryCount <= 1 << 48 else {
                    throw FormatViolation("tree \(name): root \(root), height \(height), \(entryCount) entries")
                }
                var previous: [UInt8]? = nil
                state.lastLeafOffset = 0
                let rootLevel = try state.walk(offset: root, expectedLevel: nil, lower: nil, upper: nil,
                                               into: &entries, previous: &previous)
                guard height == rootLevel + 1 else { throw FormatViolation("tree \(name): height \(height), root level \(rootLevel)") }
                guard UInt64(entries.count) == entryCount else {
                    throw FormatViolation("tree \(name): catalog says \(entryCount) entries, leaves hold \(entries.count)")
                }
            }
            trees[UInt64(id)] = (name, entries)
        }
        guard r.atEnd else { throw FormatViolation("\(cp.payload.count - r.pos) trailing bytes in checkpoint payload") }
        let liveComputed = UInt64(8192 + state.liveFrames.values.reduce(0, +) + cp.length)
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
            case .page, .overflow, .checkpoint:
                skipped += 1
            case .commit:
                guard f.txid == lastTxid + 1 else { break replay }
                let ops = try parseCommit(f, pageSize: pageSize)
                if f.isCompressed { compressedCommits += 1 }
                for op in ops {
                    switch op {
                    case .put(let id, let key, let value):
                        guard trees[id] != nil else { throw FormatViolation("txid \(f.txid): put into unknown tree \(id)") }
                        trees[id]!.entries[key] = value
                    case .delete(let id, let key):
                        guard trees[id] != nil else { throw FormatViolation("txid \(f.txid): delete in unknown tree \(id)") }
                        trees[id]!.entries[key] = nil
                    case .create(let id, let name):
                        guard trees[id] == nil, !trees.values.contains(where: { $0.name == name }), id >= nextID, id < UInt64(UInt32.max) - 1 else {
                            throw FormatViolation("txid \(f.txid): create tree \(id) \(name) collides or is out of range (next tree id \(nextID))")
                        }
                        trees[id] = (name, [:])
                        nextID = id + 1
                    case .drop(let id):
                        guard trees.removeValue(forKey: id) != nil else { throw FormatViolation("txid \(f.txid): drop of unknown tree \(id)") }
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
        var scan = logEnd + 8
        while scan <= file.count - 40 {
            if UInt32(try fdLE(file, scan, 4)) == fdMagicFrame, let f = try? frame(at: scan), f.durableEnd > UInt64(logEnd) {
                throw FormatViolation("valid frame at \(scan) claims durable end \(f.durableEnd) past the log end \(logEnd)")
            }
            scan += 8
        }

        var out: [String: [[UInt8]: [UInt8]]] = [:]
        for t in trees.values { out[t.name] = t.entries }
        return FDResult(
            header: h, validSlots: validSlots, trees: out, checkpointTxid: cp.txid, nextTreeID: nextTreeID, lastTxid: lastTxid,
            replayedCommits: replayed, skippedFramesAfterCheckpoint: skipped, logEnd: logEnd,
            liveBytesRecorded: liveRecorded, liveBytesComputed: liveComputed, checkpointFrameLength: cp.length,
            pagesVisited: state.pagesVisited, compressedPages: state.compressedPages,
            overflowFromPages: state.overflowValues, overflowFromCommits: overflowFromCommits,
            compressedOverflow: compressedOverflow, compressedCommits: compressedCommits, maxHeight: state.maxLevel + 1,
            leafOrderInversions: state.leafOrderInversions)
    }

    enum Op {
        case put(UInt64, [UInt8], [UInt8])
        case delete(UInt64, [UInt8])
        case create(UInt64, String)
        case drop(UInt64)
        case overflowRead(compressed: Bool)
    }

    /// §5. Throws on a malformed payload, a broken limit, and (§8 step 3) an overflow reference
    /// that does not resolve.
    func parseCommit(_ f: FDFrame, pageSize: Int) throws -> [Op] {
        var r = FDReader(f.payload)
        var ops: [Op] = []
        while !r.atEnd {
            let code = try r.u8()
            switch code {
            case 1, 3:
                let id = try r.varint()
                guard id <= UInt64(UInt32.max) else { throw FormatViolation("txid \(f.txid): tree id \(id)") }
                let key = try r.bytes(try r.varintInt(max: 1024))
                guard !key.isEmpty else { throw FormatViolation("txid \(f.txid): empty key") }
                let valueLength = try r.varintInt(max: 64 << 20)
                // §4's inline rule, on both sides.
                guard (6 + key.count + valueLength <= pageSize / 4) == (code == 1) else {
                    throw FormatViolation("txid \(f.txid): a \(valueLength)-byte value \(code == 1 ? "inline" : "in an overflow frame")")
                }
                if code == 1 {
                    ops.append(.put(id, key, try r.bytes(valueLength)))
                } else {
                    let at = try r.u64()
                    guard at >= 8192, at < UInt64(f.offset), let o = try? frame(at: Int(at)), o.type == .overflow,
                          o.end <= f.offset, o.rawLength == valueLength
                    else { throw FormatViolation("txid \(f.txid): overflow reference \(at) does not resolve") }
                    guard o.txid == f.txid else {
                        throw FormatViolation("overflow frame \(at) has txid \(o.txid), commit \(f.txid) refers to it")
                    }
                    ops.append(.overflowRead(compressed: o.isCompressed))
                    ops.append(.put(id, key, o.payload))
                }
            case 2:
                let id = try r.varint()
                guard id <= UInt64(UInt32.max) else { throw FormatViolation("txid \(f.txid): tree id \(id)") }
                let key = try r.bytes(try r.varintInt(max: 1024))
                guard !key.isEmpty else { throw FormatViolation("txid \(f.txid): empty key") }
                ops.append(.delete(id, key))
            case 4:
                let id = try r.varint()
                guard id <= UInt64(UInt32.max) else { throw FormatViolation("txid \(f.txid): tree id \(id)") }
                let nameBytes = try r.bytes(try r.varintInt(max: 255))
                guard !nameBytes.isEmpty else { throw FormatViolation("txid \(f.txid): empty tree name") }
                guard let name = String(validating: nameBytes, as: UTF8.self) else { throw FormatViolation("tree name not UTF-8") }
                ops.append(.create(id, name))
            case 5:
                let id = try r.varint()
                guard id <= UInt64(UInt32.max) else { throw FormatViolation("txid \(f.txid): tree id \(id)") }
                ops.append(.drop(id))
            default:
                throw FormatViolation("txid \(f.txid): unknown op byte \(code) at payload offset \(r.pos - 1)")
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
    var liveFrames: [Int: Int] = [:]  // offset → frame length, page and overflow frames reachable
    var pagesVisited = 0
    var compressedPages = 0
    var overflowValues = 0
    var compressedOverflow = 0
    var maxLevel = 0
    var lastLeafOffset = 0
    var leafOrderInversions = 0

    func expand(_ image: [UInt8], at offset: Int) throws -> (page: [UInt8], count: Int, cellStart: Int) {
        let length = image.count
        guard length >= 8 else { throw FormatViolation("page image at \(offset) shorter than 8 bytes") }
        let count = Int(try fdLE(image, 2, 2))
        let top = 8 + 2 * count
        guard top <= length, length <= pageSize else { throw FormatViolation("page image at \(offset): length \(length), count \(count)") }
        let cellStart = Int(try fdLE(image, 4, 2))
        guard cellStart == pageSize - (length - top) else {
            throw FormatViolation("page image at \(offset): cellStart \(cellStart) != P − (L − 8 − 2·count) = \(pageSize - (length - top))")
        }
        guard try fdLE(image, 6, 2) == 0 else { throw FormatViolation("page image at \(offset): fragmented != 0") }
        var page = [UInt8](repeating: 0, count: pageSize)
        page.replaceSubrange(0..<top, with: image[0..<top])
        page.replaceSubrange(cellStart..<pageSize, with: image[top..<length])
        return (page, count, cellStart)
    }

    /// Walks the subtree whose root page frame is at `offset`; returns its level.
    mutating func walk(offset: UInt64, expectedLevel: Int?, lower: [UInt8]?, upper: [UInt8]?,
                       into entries: inout [[UInt8]: [UInt8]], previous: inout [UInt8]?) throws -> Int {
        let f = try decoder.frame(at: Int(offset))
        guard f.type == .page else { throw FormatViolation("child/root \(offset) is a \(f.type) frame") }
        guard f.txid <= checkpointTxid else { throw FormatViolation("page frame \(offset) txid \(f.txid) > checkpoint \(checkpointTxid)") }
        guard liveFrames.updateValue(f.length, forKey: f.offset) == nil else { throw FormatViolation("page \(offset) reached twice") }
        pagesVisited += 1
        if f.isCompressed { compressedPages += 1 }
        let (page, count, cellStart) = try expand(f.payload, at: f.offset)
        let kind = page[0]
        let level = Int(page[1])
        guard level < 32 else { throw FormatViolation("page \(offset): level \(level)") }
        if let e = expectedLevel, level != e { throw FormatViolation("page \(offset): level \(level), expected \(e)") }
        maxLevel = max(maxLevel, level)
        func cellReader(_ i: Int) throws -> FDReader {
            let slot = Int(try fdLE(page, 8 + 2 * i, 2))
            guard slot >= cellStart, slot < pageSize else { throw FormatViolation("page \(offset): slot \(i) = \(slot) outside cells") }
            return FDReader(page, from: slot, limit: pageSize)
        }
        func inBounds(_ k: [UInt8]) -> Bool {
            (lower.map { !fdLess(k, $0) } ?? true) && (upper.map { fdLess(k, $0) } ?? true)
        }
        switch kind {
        case 1:
            guard level == 0 else { throw FormatViolation("leaf \(offset) at level \(level)") }
            if f.offset < lastLeafOffset { leafOrderInversions += 1 }
            lastLeafOffset = f.offset
            for i in 0..<count {
                var r = try cellReader(i)
                let k = try r.u16()
                let info = try r.u32()
                guard (1...1024).contains(k) else { throw FormatViolation("leaf \(offset) cell \(i): key length \(k)") }
                let isOverflow = info & 0x8000_0000 != 0
                let v = Int(info & 0x7FFF_FFFF)
                guard v <= 64 << 20 else { throw FormatViolation("leaf \(offset) cell \(i): value length \(v)") }
                let key = try r.bytes(k)
                if let p = previous, !fdLess(p, key) { throw FormatViolation("leaf \(offset) cell \(i): keys not ascending") }
                guard inBounds(key) else { throw FormatViolation("leaf \(offset) cell \(i): key outside its parent's range") }
                previous = key
                let inlineRule = 6 + k + v <= pageSize / 4
                guard isOverflow != inlineRule else {
                    throw FormatViolation("leaf \(offset) cell \(i): k=\(k) v=\(v) stored \(isOverflow ? "overflow" : "inline"), §4 rule says otherwise")
                }
                if isOverflow {
                    let at = try r.u64()
                    guard at >= 8192, at < UInt64(f.offset) else { throw FormatViolation("leaf \(offset) cell \(i): overflow offset \(at)") }
                    let o = try decoder.frame(at: Int(at))
                    guard o.type == .overflow else { throw FormatViolation("leaf \(offset) cell \(i): overflow offset \(at) is a \(o.type) frame") }
                    guard o.rawLength == v else { throw FormatViolation("overflow \(at): raw length \(o.rawLength) != value length \(v)") }
                    guard o.txid <= checkpointTxid else { throw FormatViolation("overflow \(at) txid \(o.txid) > checkpoint") }
                    guard liveFrames.updateValue(o.length, forKey: o.offset) == nil else { throw FormatViolation("overflow \(at) referenced twice") }
                    overflowValues += 1
                    // §4: values are written before the pages that refer to them.
                    guard o.offset < f.offset else { throw FormatViolation("leaf \(offset) cell \(i): overflow \(at) lies after the leaf") }
                    if o.isCompressed { compressedOverflow += 1 }
                    entries[key] = o.payload
                } else {
                    entries[key] = try r.bytes(v)
                }
            }
        case 2:
            guard level > 0 else { throw FormatViolation("branch \(offset) at level 0") }
            guard count >= 1 else { throw FormatViolation("branch \(offset) with no cells") }
            var cells: [(key: [UInt8], child: UInt64)] = []
            for i in 0..<count {
                var r = try cellReader(i)
                let k = try r.u16()
                guard k <= 1024, (i == 0) == (k == 0) else { throw FormatViolation("branch \(offset) cell \(i): key length \(k)") }
                let child = try r.u64()
                let key = try r.bytes(k)
                if i > 0 {
                    guard inBounds(key) else { throw FormatViolation("branch \(offset) cell \(i): key outside range") }
                    if i > 1, !fdLess(cells[i - 1].key, key) { throw FormatViolation("branch \(offset): keys not ascending") }
                }
                cells.append((key, child))
            }
            for i in 0..<count {
                // §6/§9: children before parents.
                guard cells[i].child < UInt64(f.offset) else {
                    throw FormatViolation("branch \(offset) cell \(i): child \(cells[i].child) is not before its parent")
                }
                _ = try walk(offset: cells[i].child, expectedLevel: level - 1,
                             lower: i == 0 ? lower : cells[i].key,
                             upper: i + 1 < count ? cells[i + 1].key : upper,
                             into: &entries, previous: &previous)
            }
        default:
            throw FormatViolation("page \(offset): kind \(kind)")
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

private func decodeFile(_ path: String) throws -> FDResult {
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
        for k in Set(x.keys).union(y.keys).sorted(by: fdLess) where x[k] != y[k] {
            return "tree \(name) (\(x.count) vs \(y.count) keys): key \(String(decoding: k.prefix(12), as: UTF8.self))… value sizes \(x[k]?.count ?? -1) vs \(y[k]?.count ?? -1)"
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
            _ = try tx.tree(name, createIfMissing: true)!
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
                _ = try tx.tree("late", createIfMissing: true)!
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
        #expect(fdCRC32C(Array("123456789".utf8), 0..<9) == 0xE306_9283)
        // Hand-made LZ4 block: 4 literals "abcd", match offset 4 length 8, then literals "xy".
        let block: [UInt8] = [0x44, 0x61, 0x62, 0x63, 0x64, 0x04, 0x00, 0x20, 0x78, 0x79]
        #expect(try fdLZ4Decompress(block, rawLength: 14) == Array("abcdabcdabcdxy".utf8))
        #expect(throws: FormatViolation.self) { try fdLZ4Decompress([0x44, 0x61, 0x62, 0x63, 0x64, 0x05, 0x00, 0x20, 0x78, 0x79], rawLength: 14) }
        var r = FDReader([0xE5, 0x8E, 0x26, 0x7F])
        #expect(try r.varint() == 624_485)
        #expect(try r.varint() == 127)
    }

    /// §9 "Create": an empty catalog checkpoint at 8192, txid 0, next tree id 1, slot 0 sequence 1.
    @Test func freshStore() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("fresh.strata")
        let store = try Store(path: path, options: options())
        let decoded = try decodeFile(path)
        #expect(decoded.header.slot == 0 && decoded.validSlots == 1 && decoded.header.sequence == 1)
        #expect(decoded.header.checkpointOffset == 8192 && decoded.checkpointTxid == 0 && decoded.nextTreeID == 1)
        #expect(decoded.header.durableEnd == 8192 + UInt64(decoded.checkpointFrameLength))
        #expect(decoded.liveBytesRecorded == decoded.liveBytesComputed)
        #expect(decoded.trees.isEmpty && decoded.replayedCommits == 0)
        try store.close()

        // The decoder is not vacuous: damage is noticed.
        var file = try readFile(path)
        file[8192 + 40 + 3] ^= 0x01  // checkpoint payload → payload checksum mismatch
        #expect(throws: FormatViolation.self) { try FormatDecoder(file: file).decode() }
        file[8192 + 40 + 3] ^= 0x01
        file[20] ^= 0x01  // slot 0 sequence → checksum mismatch, no valid slot left
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
        #expect(decoded.header.pageSize == pageSize)
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
        let headerBefore = try FormatDecoder(file: try readFile(path)).header().0
        _ = try store.compact()

        let file = try readFile(path)
        let decoded = try FormatDecoder(file: file).decode()
        #expect(decoded.header.slot == 0 && decoded.validSlots == 1)
        #expect(file[4096..<8192].allSatisfy { $0 == 0 }, "slot 1 is zeroed")
        #expect(decoded.header.fileID == headerBefore.fileID, "compaction keeps the file id")
        #expect(decoded.header.sequence == headerBefore.sequence + 1, "slot 0 gets the next sequence")
        #expect(decoded.leafOrderInversions == 0, "§10: leaves are written in key order")
        // §10 and §4: overflow values come before their leaf (the decoder refuses anything else).
        // §10: header, then pages and overflow values, then one checkpoint frame, nothing else.
        let decoder = FormatDecoder(file: file)
        var position = 8192
        var types: [FDFrameType] = []
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
                let t = try tx.tree("gamma", createIfMissing: true)!
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
            for slot in 0...1 { decoderRefuses(CorruptionTests.forge(fixture.bytes, slot: slot, forgery), "slot \(slot): \(forgery.name)") }
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
            [ForgedRecordTests.record { $0.putOverflow(1, bytes("k"), length: 3000, frame: o.large) }, ForgedRecordTests.record { $0.create(2, bytes("u")) }]
        }
        #expect(try FormatDecoder(file: try #require(control.contents(of: relPath))).decode().trees.keys.sorted() == ["t", "u"])
        for (label, make) in ForgedRecordTests.commitForgeries {
            let fs = SimulatedFileSystem()
            try ForgedRecordTests.storeWithCommits(fs: fs) { o in make(o) + [ForgedRecordTests.record { $0.put(1, bytes("z"), bytes("9")) }] }
            decoderRefuses(try #require(fs.contents(of: relPath)), "commit: \(label)")
        }
        // Checkpoint records.
        let checkpointControl = SimulatedFileSystem()
        try ForgedRecordTests.storeWithCheckpoint(fs: checkpointControl) { ForgedRecordTests.checkpoint($0, names: [bytes("t"), bytes("u")]) }
        #expect(try FormatDecoder(file: try #require(checkpointControl.contents(of: relPath))).decode().trees.keys.sorted() == ["t", "u"])
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
        let (header, validSlots) = try decoder.header()
        #expect(validSlots == 2)
        var position = 8192
        var counts: [UInt8: Int] = [:]
        var previousTxid: [UInt8: UInt64] = [:]
        var pendingPageTxids: [UInt64] = []
        while position < file.count {
            let f = try decoder.frame(at: position)
            counts[f.type.rawValue, default: 0] += 1
            let padding = file[(position + 40 + f.storedLength)..<f.end]
            #expect(padding.allSatisfy { $0 == 0 }, "padding of frame at \(position)")
            #expect(f.durableEnd <= UInt64(position), "frame at \(position) claims durable end \(f.durableEnd)")
            if f.type == .commit {
                #expect(f.txid == (previousTxid[2] ?? 0) + 1, "commit txids are consecutive")
                previousTxid[2] = f.txid
            }
            if f.type == .checkpoint {
                #expect(!f.isCompressed)
                // §3: page frames carry "the transaction the checkpoint captured".
                #expect(pendingPageTxids.allSatisfy { $0 == f.txid }, "page frames before checkpoint \(f.txid): \(Set(pendingPageTxids))")
                pendingPageTxids = []
            }
            if f.type == .page { pendingPageTxids.append(f.txid) }
            if f.isCompressed {  // §3: stored raw unless LZ4 saves at least 1/16
                #expect(f.storedLength * 16 <= f.rawLength * 15, "frame at \(position): \(f.storedLength) of \(f.rawLength)")
            }
            position = f.end
        }
        #expect(position == file.count)
        #expect(pendingPageTxids.isEmpty, "the file ends with a checkpoint")
        #expect(counts[1, default: 0] > 0 && counts[2, default: 0] == 31 && counts[3, default: 0] >= 4 && counts[4, default: 0] > 0,
                "frame counts by type \(counts)")
        #expect(Int(header.checkpointOffset) == position - (try decoder.frame(at: Int(header.checkpointOffset))).length)
    }
}
