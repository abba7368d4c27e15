import ArgumentParser
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Cases

struct FuzzCase {
    var bytes: [UInt8]
    /// States the damaged file may open as (`-1`: a new, empty store).
    var allowed: Set<Int>
    var what: String

    /// The mutation of storage case `i` is kind `i % 12` (kinds 0–8); cases whose `i % 12` is
    /// 9, 10 or 11 are record cases (``RecordsFuzzCase``), their kinds taken in turn.
    static let kindNames = ["bit flips", "byte run", "truncation", "appended bytes", "frame splice", "frame header field",
                            "header slot field", "lost sector/block", "payload field"]
    static let cycle = 12

    static func isRecordCase(_ index: Int) -> Bool { index % cycle >= kindNames.count }

    /// The record kind of record case `index`.
    static func recordKind(_ index: Int) -> Int {
        let perCycle = cycle - kindNames.count
        return (index / cycle * perCycle + index % cycle - kindNames.count) % RecordsFuzzCase.kindNames.count
    }

    /// What case `index` damages (storage or record case).
    static func caseDescription(_ f: FuzzFixture, seed: UInt64, index: Int) -> String {
        isRecordCase(index) ? "records: " + RecordsFuzzCase.make(f.records, seed: seed, index: index, kind: recordKind(index)).what
                            : make(f, seed: seed, index: index).what
    }

    /// The name of case `index`'s mutation kind, for tallies.
    static func kindName(_ index: Int) -> String {
        isRecordCase(index) ? "records: " + RecordsFuzzCase.kindNames[recordKind(index)] : kindNames[index % cycle]
    }

    /// Values no valid field holds, around each width's and each signed conversion's limits.
    static let extremes: [UInt64] = [0, 1, 0xFFFF_FFFF, 0x8000_0000, 1 << 40, 1 << 63, (1 << 63) - 1, (1 << 63) - 8,
                                     UInt64.max, UInt64.max - 7]

    /// Case `index` of `seed`: one seeded mutation of the seed store.
    static func make(_ f: FuzzFixture, seed: UInt64, index: Int) -> FuzzCase {
        var rng = SplitMix64(seed: mixSeed(seed, UInt64(index), 0x4655_5A5A))
        var b = f.bytes
        var allowed: Set<Int> = [f.full]
        var what: String
        /// A damaged offset: mostly in the log, sometimes in the header slots or anywhere.
        func offset() -> Int {
            switch rng.below(10) {
            case 0:
                let inSlot = rng.below(ReferenceFormat.slotLength)
                return inSlot + ReferenceFormat.HeaderSlot.start(ofSlot: rng.below(2))
            case 1: return rng.below(b.count)
            default: return ReferenceFormat.logStart + rng.below(f.logEnd - ReferenceFormat.logStart)
            }
        }
        /// Damage to bytes `lo...hi`. Reaching the last commit's frames, it may read as a torn
        /// tail; reaching the last frame, it leaves no frame after `lo` that says the commits
        /// there were durable: the file reads as if cut at `lo` (FORMAT.md §8's limit).
        func damaged(_ lo: Int, _ hi: Int) {
            if hi >= f.lastCommitRegion { allowed.insert(f.full - 1) }
            if hi >= f.frames.last!.offset && lo >= f.checkpointEnd { allowed.insert(f.commitsWithin(lo)) }
        }
        func pick<T>(_ a: [T]) -> T { a[rng.below(a.count)] }

        switch index % cycle {
        case 0:
            var at: [Int] = []
            for _ in 0..<rng.int(1...4) {
                let x = offset()
                b[x] ^= 1 << UInt8(rng.below(8))
                at.append(x)
            }
            for x in at { damaged(x, x) }
            what = "bit flips at \(at)"
        case 1:
            let x = offset()
            let length = min(rng.int(1...600), b.count - x)
            let fill = rng.below(3)
            for i in x..<(x + length) { b[i] = fill == 0 ? 0 : fill == 1 ? 0xFF : UInt8(truncatingIfNeeded: rng.next()) }
            damaged(x, x + length - 1)
            what = "run of \(length) \(["zeros", "0xFF", "random bytes"][fill]) at \(x)"
        case 2:
            let length = rng.below(10) == 0 ? rng.int(0...ReferenceFormat.logStart)
                                            : rng.int(f.checkpointOffset...b.count)
            b.removeSubrange(length...)
            if length >= f.logEnd {
                allowed = [f.full]
            } else if length >= f.checkpointEnd {
                allowed = [f.commitsWithin(length)]
            } else {
                allowed = length == 0 ? [-1] : []
            }
            what = "truncated to \(length)"
        case 3:
            b.removeSubrange(f.logEnd...)
            if rng.chance(0.5) {
                b += rng.bytes(rng.int(1...5000))
                what = "random garbage appended"
            } else {
                // A stale copy of an old frame after the log (as a reused block would hold).
                let fr = pick(f.frames)
                b += Array(b[fr.offset..<(fr.offset + fr.length)])
                what = "copy of the type-\(fr.type.rawValue) frame at \(fr.offset) appended"
            }
        case 4:
            let dst = pick(f.frames)
            let sameType = f.frames.filter { $0.type == dst.type && $0.offset != dst.offset }
            let src = rng.chance(0.5) && !sameType.isEmpty ? pick(sameType) : pick(f.frames.filter { $0.offset != dst.offset })
            let whole = rng.chance(0.5)
            let n = min(whole ? src.length : min(src.length, dst.length), b.count - dst.offset)
            let copy = Array(f.bytes[src.offset..<(src.offset + n)])
            b.replaceSubrange(dst.offset..<(dst.offset + n), with: copy)
            damaged(dst.offset, dst.offset + n - 1)
            what = "type-\(src.type.rawValue) frame at \(src.offset) (\(src.length) bytes) copied over the "
                + "type-\(dst.type.rawValue) frame at \(dst.offset) (\(dst.length) bytes)"
                + (whole ? "" : ", cut to its length")
        case 5:
            let fr = pick(f.frames)
            let at = fr.offset
            let fields: [ReferenceFormat.FrameHeader.Field] = [.storedLength, .rawLength, .txid, .durableEnd, .type,
                                                               .flags]
            let field = fields[rng.below(fields.count)]
            let v = pick(extremes)
            b.setLittleEndian(v, at: at + field.offset, width: field.width)
            let sealed = rng.below(10) < 7
            if sealed { ReferenceFormat.Frame.resealHeader(&b, frameAt: at) }
            damaged(at, at + ReferenceFormat.frameHeaderLength - 1)
            what = "type-\(fr.type.rawValue) frame at \(at): \(field.name) = \(v)\(sealed ? " (resealed)" : "")"
        case 6:
            let slot = rng.below(2)
            let fields: [ReferenceFormat.HeaderSlot.Field] = [.formatVersion, .pageSize, .sequence, .checkpointOffset,
                                                              .durableEnd, .checkpointTxid, .flags]
            let field = pick(fields)
            let v = pick(extremes)
            b.setLittleEndian(v, at: ReferenceFormat.HeaderSlot.position(of: field, slot: slot), width: field.width)
            let sealed = rng.below(10) < 7
            if sealed { ReferenceFormat.HeaderSlot.reseal(&b, slot: slot) }
            what = "header slot \(slot): \(field.name) = \(v)\(sealed ? " (resealed)" : "")"
        case 7:
            let size = rng.chance(0.5) ? 512 : 4096
            let x = rng.below(b.count / size) * size
            let zero = rng.chance(0.5)
            for i in x..<min(b.count, x + size) { b[i] = zero ? 0 : UInt8(truncatingIfNeeded: rng.next()) }
            damaged(x, min(b.count, x + size) - 1)
            what = "\(size)-byte block at \(x) \(zero ? "zeroed" : "scrambled")"
        default:
            let (text, at) = forgePayloadField(f, &b, &rng)
            what = text
            damaged(at, at)
        }
        return FuzzCase(bytes: b, allowed: allowed, what: what)
    }

    /// Sets one offset, length or order field inside a frame's payload (a checkpoint's tree
    /// entry, a page's header, slot or cell, a commit's operation or overflow reference) to a
    /// value no valid store has there — or points two branch cells at one child, swaps two
    /// children or two slots, reverses a leaf's slots — and re-seals both checksums: only the
    /// engine's structural checks stand between it and the reader. A page forged inside a
    /// compressed frame is appended uncompressed with its ancestors (``StoreSurgery``).
    /// Returns a description and the damaged frame's offset.
    static func forgePayloadField(_ f: FuzzFixture, _ b: inout [UInt8], _ rng: inout SplitMix64) -> (String, Int) {
        typealias PageImage = ReferenceFormat.PageImage
        guard let surgery = f.surgery else { return ("no frame map", 0) }
        let candidates = f.frames.filter {
            $0.type != .overflow && $0.storedLength > 0
                && (!$0.isCompressed || ($0.type == .page && surgery.pageImages[$0.offset] != nil))
        }
        let fr = candidates[rng.below(candidates.count)]
        let badOffsets: [UInt64] = [0, 1, 4096, 8191, 0xFFFF_FFFF, 1 << 40, 1 << 63, (1 << 63) - 1, (1 << 63) - 8,
                                    UInt64.max, UInt64.max - 7, UInt64(f.bytes.count + 8) & ~7]
        /// A frame of another type than `type` (a valid frame, but the wrong kind).
        func wrongFrame(_ type: ReferenceFrameType) -> [UInt64] {
            f.frames.filter { $0.type != type }.prefix(200).map { UInt64($0.offset) }.suffix(3)
        }
        /// One way to forge the payload: a description and the change, on the raw payload.
        typealias Edit = (name: String, apply: (inout [UInt8]) -> Void)
        var edits: [Edit] = []
        func field(_ position: Int, _ width: Int, _ name: String, _ values: [UInt64]) {
            let value = values[rng.below(values.count)]
            edits.append(("\(name) = \(value)", { $0.setLittleEndian(value, at: position, width: width) }))
        }
        let payloadStart = fr.offset + ReferenceFormat.frameHeaderLength
        let storedPayload = Array(b[payloadStart..<(payloadStart + fr.storedLength)])
        var payload = fr.type == .page ? surgery.pageImages[fr.offset] ?? storedPayload : storedPayload
        let end = payload.count
        switch fr.type {
        case .checkpoint:
            typealias CheckpointRecord = ReferenceFormat.CheckpointRecord
            field(CheckpointRecord.liveBytesPosition, 8, "live bytes", [0, 1 << 63, UInt64.max])
            field(CheckpointRecord.treeCountPosition, 4, "tree count", [0xFFFF, 0xFFFF_FFFF, 0x8000_0000])
            for entry in CheckpointRecord.entryPlaces(in: payload) {
                field(entry.nameLengthPosition, 2, "tree name length", [0xFFFF, 256])
                field(entry.rootOffsetPosition, 8, "tree root offset",
                      badOffsets.filter { $0 != 0 } + wrongFrame(.page))
                field(entry.entryCountPosition, 8, "tree entry count", [UInt64.max, 1 << 63, 1 << 62])
                field(entry.heightPosition, 1, "tree height", [33, 0xFF])
            }
        case .page:
            let cells = PageImage.cellPlaces(in: payload)
            let isLeaf = payload[PageImage.Field.kind.offset] == ReferenceFormat.leafKind
            field(PageImage.Field.level.offset, 1, "page level", [32, 0xFF])
            field(PageImage.Field.count.offset, 2, "page cell count", [0xFFFF, UInt64(cells.count + 1)])
            field(PageImage.Field.cellStart.offset, 2, "page cell start", [0, 1, 0xFFFF])
            let slots = cells.map { payload.littleEndian(at: $0.slotPosition, width: 2) }
            /// Where cell `index`'s child offset lies (a branch's cells).
            func childPosition(_ index: Int) -> Int { cells[index].cellPosition + PageImage.BranchCell.childOffset }
            for (i, cell) in cells.enumerated() {
                // Another cell's slot: a duplicated key, and keys out of order.
                field(cell.slotPosition, 2, "page slot \(i)",
                      [0, 7, 0xFFFF] + slots.filter { $0 != slots[i] }.prefix(2))
                field(cell.cellPosition, 2, "cell \(i) key length", [0xFFFF, 1025, 0])
                if isLeaf {
                    let infoPosition = cell.cellPosition + PageImage.LeafCell.valueInfoOffset
                    let info = payload.littleEndian(at: infoPosition, width: 4)
                    field(infoPosition, 4, "cell \(i) value info",
                          [0x7FFF_FFFF, 0xFFFF_FFFF, 0x8000_0000 | (64 << 20) + 1])
                    let referencePosition = cell.cellPosition + PageImage.LeafCell.keyOffset + cell.keyLength
                    if info & UInt64(ReferenceFormat.overflowBit) != 0, referencePosition + 8 <= end {
                        field(referencePosition, 8, "cell \(i) overflow offset", badOffsets + wrongFrame(.overflow))
                    }
                } else {
                    let children = cells.indices.map { payload.littleEndian(at: childPosition($0), width: 8) }
                    // A sibling's child: two cells share one child.
                    field(childPosition(i), 8, "cell \(i) child offset",
                          badOffsets + wrongFrame(.page) + children.filter { $0 != children[i] }.prefix(2))
                }
            }
            if cells.count >= 2 {
                let i = rng.below(cells.count), j = (i + 1 + rng.below(cells.count - 1)) % cells.count
                if isLeaf {
                    edits.append(("slots \(i) and \(j) swapped", { image in
                        let first = image.littleEndian(at: cells[i].slotPosition, width: 2)
                        let second = image.littleEndian(at: cells[j].slotPosition, width: 2)
                        image.setLittleEndian(second, at: cells[i].slotPosition, width: 2)
                        image.setLittleEndian(first, at: cells[j].slotPosition, width: 2)
                    }))
                    edits.append(("slots reversed (keys descending)", { image in
                        for (k, slot) in slots.reversed().enumerated() {
                            image.setLittleEndian(slot, at: cells[k].slotPosition, width: 2)
                        }
                    }))
                } else {
                    edits.append(("children of cells \(i) and \(j) swapped", { image in
                        let first = image.littleEndian(at: childPosition(i), width: 8)
                        let second = image.littleEndian(at: childPosition(j), width: 8)
                        image.setLittleEndian(second, at: childPosition(i), width: 8)
                        image.setLittleEndian(first, at: childPosition(j), width: 8)
                    }))
                }
            }
        case .commit, .overflow:
            // Commit records: the op codes and the overflow references of put-overflow operations.
            for site in ReferenceFormat.CommitRecord.sites(in: payload, from: 0, to: end) {
                switch site {
                case .opCode(let at): field(at, 1, "commit op code", [0, 6, 0xFF])
                case .overflowReference(let at):
                    field(at, 8, "commit overflow offset", badOffsets + wrongFrame(.overflow))
                }
            }
        }
        guard !edits.isEmpty else {
            return ("payload of type-\(fr.type.rawValue) frame at \(fr.offset): no field to forge", fr.offset)
        }
        let edit = edits[rng.below(edits.count)]
        edit.apply(&payload)
        if !fr.isCompressed {
            b.replaceSubrange(payloadStart..<(payloadStart + fr.storedLength), with: payload)
            ReferenceFormat.Frame.reseal(&b, frameAt: fr.offset)
            return ("payload of type-\(fr.type.rawValue) frame at \(fr.offset): \(edit.name) (resealed)", fr.offset)
        }
        var s = surgery
        guard let inserted = try? s.replacePage(at: fr.offset, with: payload) else {
            return ("page in the compressed frame at \(fr.offset): not reachable, left as it was", fr.offset)
        }
        b = s.bytes
        return ("page in the compressed frame at \(fr.offset): \(edit.name) (rewritten uncompressed at \(inserted[0]) "
                + "with \(inserted.count - 1) ancestor\(inserted.count == 2 ? "" : "s"), resealed)", fr.offset)
    }

    enum Outcome: CustomStringConvertible {
        /// Read fully; the content is state `index` (`nil`: no committed state); `checkProblems`
        /// from check().
        case read(index: Int?, checkProblems: [String])
        case typed(StrataError)
        /// The harness caught the engine returning inconsistent data.
        case inconsistent(String)
        case otherError(String)

        var description: String {
            switch self {
            case .read(let i, let problems):
                return "\(i.map { $0 < 0 ? "empty store" : "state \($0)" } ?? "NO COMMITTED STATE")\(problems.isEmpty ? "" : ", check: \(problems.prefix(3).joined(separator: "; "))")"
            case .typed(let e): return "StrataError \(e)"
            case .inconsistent(let s): return "INCONSISTENT \(s)"
            case .otherError(let s): return "NON-STRATA ERROR \(s)"
            }
        }
    }

    /// Opens `bytes` through `layer` (read-only or read-write) and reads everything; a
    /// writable open then takes a write and reads it back.
    static func examine(_ bytes: [UInt8], readOnly: Bool, layer: FuzzLayer, fixture f: FuzzFixture) -> Outcome {
        do {
            let (fs, path, simulated) = try layer.place(bytes, name: "store.strata")
            var o = FuzzFixture.options(fs)
            o.readOnly = readOnly
            // `normal`: the write after recovery does not preallocate (and copy) a MiB of zeros.
            o.durability = .normal
            let mutationsBefore = simulated?.mutationCount ?? 0
            let store = try Store(path: path, options: o)
            return try withExtendedLifetime(store) { () throws -> Outcome in
                // A writable simulated store is dropped without its closing checkpoint (its I/O
                // stops here); a real file is closed.
                defer { if !readOnly, let simulated { simulated.crashAfter(operations: 0) } else { try? store.close() } }
                let content = try store.read { try digestContent($0, thorough: true) }
                let report = try store.check()
                let index: Int? = content == ContentDigest() && !f.states.contains(content) ? -1 : f.states.firstIndex(of: content)
                if readOnly, let simulated, simulated.mutationCount != mutationsBefore {
                    return .inconsistent("the read-only open wrote to the file system")
                }
                if !readOnly {
                    // The recovered store takes a write.
                    try store.write { tx in try tx.tree("zz-fuzz", createIfMissing: true)!.put(Array("k".utf8), Array("v".utf8)) }
                    guard try store.read({ try $0.tree("zz-fuzz")?.get(Array("k".utf8)) }) == Array("v".utf8) else {
                        return .inconsistent("a write after recovery cannot be read back")
                    }
                }
                return .read(index: index, checkProblems: report.problems)
            }
        } catch let e as StrataError {
            return .typed(e)
        } catch let e as HarnessFailure {
            return .inconsistent(e.description)
        } catch {
            return .otherError(String(describing: error))
        }
    }

    /// The four opens of a case: read-only and read-write, simulated and through POSIX.
    static func examineAll(_ bytes: [UInt8], posixDirectory: String, fixture f: FuzzFixture) -> [(String, Outcome)] {
        let posix = FuzzLayer.posix(directory: posixDirectory)
        return [("read-only", examine(bytes, readOnly: true, layer: .simulated, fixture: f)),
                ("read-write", examine(bytes, readOnly: false, layer: .simulated, fixture: f)),
                ("read-only POSIX", examine(bytes, readOnly: true, layer: posix, fixture: f)),
                ("read-write POSIX", examine(bytes, readOnly: false, layer: posix, fixture: f))]
    }

    /// The line a worker prints for a case: `I`, `C`, `P`, `E kind: …` or `W …`.
    static func judge(_ c: FuzzCase, outcomes: [(String, Outcome)], fixture f: FuzzFixture) -> String {
        var wrong: [String] = []
        var typed: StrataError?
        var prefix = false
        var flagged = false
        for (mode, outcome) in outcomes {
            switch outcome {
            case .read(let index, let problems):
                if !problems.isEmpty { flagged = true }
                guard let index else {
                    wrong.append("\(mode): content is no committed state\(problems.isEmpty ? "" : " (check: \(problems.prefix(2).joined(separator: "; ")))")")
                    continue
                }
                if !c.allowed.contains(index) {
                    wrong.append("\(mode): opened as \(index < 0 ? "an empty store" : "state \(index)"), allowed \(c.allowed.sorted())\(problems.isEmpty ? "" : " (check: \(problems.prefix(2).joined(separator: "; ")))")")
                } else if index != f.full {
                    prefix = true
                }
            case .typed(let e): typed = typed ?? e
            case .inconsistent(let s): wrong.append("\(mode): \(s)")
            case .otherError(let s): wrong.append("\(mode): non-Strata error \(s)")
            }
        }
        if !wrong.isEmpty { return "W " + wrong.joined(separator: " | ") }
        if let typed {
            let kind: String
            switch typed {
            case .corrupt: kind = "corrupt"
            case .notAStrataFile: kind = "notAStrataFile"
            case .unsupportedFormatVersion: kind = "unsupportedFormatVersion"
            case .ioFailure: kind = "ioFailure"
            case .invalidArgument: kind = "invalidArgument"
            default: kind = "other"
            }
            return "E \(kind): \(typed)"
        }
        if prefix { return "P" }
        return flagged ? "C" : "I"
    }
}
