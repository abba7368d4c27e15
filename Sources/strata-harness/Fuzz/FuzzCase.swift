import ArgumentParser
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Cases

struct FuzzCase {
    var bytes: [UInt8]
    /// States the damaged file may open as (`-1`: a new, empty store).
    var allowed: Set<Int>
    var what: String

    /// The mutation of storage case `i` is kind `i % 12` (kinds 0–8); cases whose `i % 12` is
    /// 9, 10 or 11 are record cases (``RecordsFuzzCase``), their kinds taken in turn.
    static let kindNames = ["bit flips", "byte run", "truncation", "appended bytes", "frame splice",
                            "frame header field", "header slot field", "lost sector/block", "payload field"]
    static let cycle = 12

    static func isRecordCase(_ index: Int) -> Bool { index % cycle >= kindNames.count }

    /// The record kind of record case `index`.
    static func recordKind(_ index: Int) -> Int {
        let perCycle = cycle - kindNames.count
        return (index / cycle * perCycle + index % cycle - kindNames.count) % RecordsFuzzCase.kindNames.count
    }

    /// What case `index` damages (storage or record case).
    static func caseDescription(_ fixture: FuzzFixture, seed: UInt64, index: Int) -> String {
        isRecordCase(index)
            ? "records: " + RecordsFuzzCase.make(fixture.records, seed: seed, index: index,
                                                 kind: recordKind(index)).what
            : make(fixture, seed: seed, index: index).what
    }

    /// The name of case `index`'s mutation kind, for tallies.
    static func kindName(_ index: Int) -> String {
        isRecordCase(index) ? "records: " + RecordsFuzzCase.kindNames[recordKind(index)] : kindNames[index % cycle]
    }

    /// Values no valid field holds, around each width's and each signed conversion's limits.
    static let extremes: [UInt64] = [0, 1, 0xFFFF_FFFF, 0x8000_0000, 1 << 40, 1 << 63, (1 << 63) - 1, (1 << 63) - 8,
                                     UInt64.max, UInt64.max - 7]

    /// Case `index` of `seed`: one seeded mutation of the seed store.
    static func make(_ fixture: FuzzFixture, seed: UInt64, index: Int) -> FuzzCase {
        var rng = SplitMix64(seed: mixSeed(seed, UInt64(index), 0x4655_5A5A))
        var bytes = fixture.bytes
        var allowed: Set<Int> = [fixture.full]
        var what: String
        /// A damaged offset: mostly in the log, sometimes in the header slots or anywhere.
        func offset() -> Int {
            switch rng.below(10) {
            case 0:
                let inSlot = rng.below(ReferenceFormat.slotLength)
                return inSlot + ReferenceFormat.HeaderSlot.start(ofSlot: rng.below(2))
            case 1: return rng.below(bytes.count)
            default: return ReferenceFormat.logStart + rng.below(fixture.logEnd - ReferenceFormat.logStart)
            }
        }
        /// Damage to bytes `low...hi`. Reaching the last commit's frames, it may read as a torn
        /// tail; reaching the last frame, it leaves no frame after `low` that says the commits
        /// there were durable: the file reads as if cut at `low` (FORMAT.md §8's limit).
        func damaged(_ low: Int, _ high: Int) {
            if high >= fixture.lastCommitRegion { allowed.insert(fixture.full - 1) }
            if high >= fixture.frames.last!.offset && low >= fixture.checkpointEnd {
                allowed.insert(fixture.commitsWithin(low))
            }
        }
        func pick<T>(_ choices: [T]) -> T { choices[rng.below(choices.count)] }

        switch index % cycle {
        case 0:
            var at: [Int] = []
            for _ in 0..<rng.int(1...4) {
                let position = offset()
                bytes[position] ^= 1 << UInt8(rng.below(8))
                at.append(position)
            }
            for position in at { damaged(position, position) }
            what = "bit flips at \(at)"
        case 1:
            let position = offset()
            let length = min(rng.int(1...600), bytes.count - position)
            let fill = rng.below(3)
            for i in position..<(position + length) {
                bytes[i] = fill == 0 ? 0 : fill == 1 ? 0xFF : UInt8(truncatingIfNeeded: rng.next())
            }
            damaged(position, position + length - 1)
            what = "run of \(length) \(["zeros", "0xFF", "random bytes"][fill]) at \(position)"
        case 2:
            let length = rng.below(10) == 0 ? rng.int(0...ReferenceFormat.logStart)
                                            : rng.int(fixture.checkpointOffset...bytes.count)
            bytes.removeSubrange(length...)
            if length >= fixture.logEnd {
                allowed = [fixture.full]
            } else if length >= fixture.checkpointEnd {
                allowed = [fixture.commitsWithin(length)]
            } else {
                allowed = length == 0 ? [-1] : []
            }
            what = "truncated to \(length)"
        case 3:
            bytes.removeSubrange(fixture.logEnd...)
            if rng.chance(0.5) {
                bytes += rng.bytes(rng.int(1...5000))
                what = "random garbage appended"
            } else {
                // A stale copy of an old frame after the log (as a reused block would hold).
                let frame = pick(fixture.frames)
                bytes += Array(bytes[frame.offset..<(frame.offset + frame.length)])
                what = "copy of the type-\(frame.type.rawValue) frame at \(frame.offset) appended"
            }
        case 4:
            let target = pick(fixture.frames)
            let sameType = fixture.frames.filter { $0.type == target.type && $0.offset != target.offset }
            let source = rng.chance(0.5) && !sameType.isEmpty
                ? pick(sameType) : pick(fixture.frames.filter { $0.offset != target.offset })
            let whole = rng.chance(0.5)
            let copied = min(whole ? source.length : min(source.length, target.length), bytes.count - target.offset)
            let copy = Array(fixture.bytes[source.offset..<(source.offset + copied)])
            bytes.replaceSubrange(target.offset..<(target.offset + copied), with: copy)
            damaged(target.offset, target.offset + copied - 1)
            what = "type-\(source.type.rawValue) frame at \(source.offset) (\(source.length) bytes) copied over the "
                + "type-\(target.type.rawValue) frame at \(target.offset) (\(target.length) bytes)"
                + (whole ? "" : ", cut to its length")
        case 5:
            let frame = pick(fixture.frames)
            let at = frame.offset
            let fields: [ReferenceFormat.FrameHeader.Field] = [.storedLength, .rawLength, .txid, .durableEnd, .type,
                                                               .flags]
            let field = fields[rng.below(fields.count)]
            let value = pick(extremes)
            bytes.setLittleEndian(value, at: at + field.offset, width: field.width)
            let sealed = rng.below(10) < 7
            if sealed { ReferenceFormat.Frame.resealHeader(&bytes, frameAt: at) }
            damaged(at, at + ReferenceFormat.frameHeaderLength - 1)
            what = "type-\(frame.type.rawValue) frame at \(at): \(field.name) = \(value)\(sealed ? " (resealed)" : "")"
        case 6:
            let slot = rng.below(2)
            let fields: [ReferenceFormat.HeaderSlot.Field] = [.formatVersion, .pageSize, .sequence, .checkpointOffset,
                                                              .durableEnd, .checkpointTxid, .flags]
            let field = pick(fields)
            let value = pick(extremes)
            bytes.setLittleEndian(value, at: ReferenceFormat.HeaderSlot.position(of: field, slot: slot),
                                  width: field.width)
            let sealed = rng.below(10) < 7
            if sealed { ReferenceFormat.HeaderSlot.reseal(&bytes, slot: slot) }
            what = "header slot \(slot): \(field.name) = \(value)\(sealed ? " (resealed)" : "")"
        case 7:
            let size = rng.chance(0.5) ? 512 : 4096
            let position = rng.below(bytes.count / size) * size
            let zero = rng.chance(0.5)
            for i in position..<min(bytes.count, position + size) {
                bytes[i] = zero ? 0 : UInt8(truncatingIfNeeded: rng.next())
            }
            damaged(position, min(bytes.count, position + size) - 1)
            what = "\(size)-byte block at \(position) \(zero ? "zeroed" : "scrambled")"
        default:
            let (text, at) = forgePayloadField(fixture, &bytes, &rng)
            what = text
            damaged(at, at)
        }
        return FuzzCase(bytes: bytes, allowed: allowed, what: what)
    }

    /// Sets one offset, length or order field inside a frame's payload (a checkpoint's tree
    /// entry, a page's header, slot or cell, a leaf delta's base offset, count or change, a
    /// commit's operation or overflow reference) to a value no valid store has there — or
    /// points two branch cells at one child, swaps two children or two slots, reverses a leaf's
    /// slots, swaps two delta changes' keys — and re-seals both checksums: only the engine's
    /// structural checks stand between it and the reader. A page or leaf delta forged inside a
    /// compressed frame is appended uncompressed with its ancestors (``StoreSurgery``).
    /// Returns a description and the damaged frame's offset.
    static func forgePayloadField(_ fixture: FuzzFixture, _ bytes: inout [UInt8],
                                  _ rng: inout SplitMix64) -> (String, Int) {
        typealias PageImage = ReferenceFormat.PageImage
        guard let surgery = fixture.surgery else { return ("no frame map", 0) }
        let candidates = fixture.frames.filter {
            $0.type != .overflow && $0.storedLength > 0
                && (!$0.isCompressed || ($0.type == .page && surgery.pageImages[$0.offset] != nil)
                    || ($0.type == .leafDelta && surgery.deltaPayloads[$0.offset] != nil))
        }
        let frame = candidates[rng.below(candidates.count)]
        let badOffsets: [UInt64] = [0, 1, 4096, 8191, 0xFFFF_FFFF, 1 << 40, 1 << 63, (1 << 63) - 1, (1 << 63) - 8,
                                    UInt64.max, UInt64.max - 7, UInt64(fixture.bytes.count + 8) & ~7]
        /// A frame of another type than `type` (a valid frame, but the wrong kind). A leaf delta
        /// stands wherever a leaf's page frame may (§4), so it is no wrong frame for a page.
        func wrongFrame(_ type: ReferenceFrameType) -> [UInt64] {
            let right: Set<ReferenceFrameType> = type == .page ? [.page, .leafDelta] : [type]
            return fixture.frames.filter { !right.contains($0.type) }.prefix(200).map { UInt64($0.offset) }.suffix(3)
        }
        /// One way to forge the payload: a description and the change, on the raw payload.
        typealias Edit = (name: String, apply: (inout [UInt8]) -> Void)
        var edits: [Edit] = []
        func field(_ position: Int, _ width: Int, _ name: String, _ values: [UInt64]) {
            let value = values[rng.below(values.count)]
            edits.append(("\(name) = \(value)", { $0.setLittleEndian(value, at: position, width: width) }))
        }
        let payloadStart = frame.offset + ReferenceFormat.frameHeaderLength
        let storedPayload = Array(bytes[payloadStart..<(payloadStart + frame.storedLength)])
        var payload: [UInt8]
        switch frame.type {
        case .page: payload = surgery.pageImages[frame.offset] ?? storedPayload
        case .leafDelta: payload = surgery.deltaPayloads[frame.offset] ?? storedPayload
        case .commit, .checkpoint, .overflow: payload = storedPayload
        }
        let end = payload.count
        switch frame.type {
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
                        for (index, slot) in slots.reversed().enumerated() {
                            image.setLittleEndian(slot, at: cells[index].slotPosition, width: 2)
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
        case .leafDelta:
            let forgeries = leafDeltaForgeries(frame, payload: payload, fixture: fixture, surgery: surgery,
                                               badOffsets: badOffsets, rng: &rng)
            for choice in forgeries.fields { field(choice.position, choice.width, choice.name, choice.values) }
            edits += forgeries.edits
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
            return ("payload of type-\(frame.type.rawValue) frame at \(frame.offset): no field to forge", frame.offset)
        }
        let edit = edits[rng.below(edits.count)]
        edit.apply(&payload)
        if !frame.isCompressed {
            bytes.replaceSubrange(payloadStart..<(payloadStart + frame.storedLength), with: payload)
            ReferenceFormat.Frame.reseal(&bytes, frameAt: frame.offset)
            return ("payload of type-\(frame.type.rawValue) frame at \(frame.offset): \(edit.name) (resealed)",
                    frame.offset)
        }
        var editedSurgery = surgery
        let node = frame.type == .leafDelta ? "leaf delta" : "page"
        let replaced = frame.type == .leafDelta
            ? try? editedSurgery.replaceDelta(at: frame.offset, with: payload)
            : try? editedSurgery.replacePage(at: frame.offset, with: payload)
        guard let inserted = replaced else {
            return ("\(node) in the compressed frame at \(frame.offset): not reachable, left as it was", frame.offset)
        }
        bytes = editedSurgery.bytes
        return ("\(node) in the compressed frame at \(frame.offset): \(edit.name) "
                + "(rewritten uncompressed at \(inserted[0]) "
                + "with \(inserted.count - 1) ancestor\(inserted.count == 2 ? "" : "s"), resealed)", frame.offset)
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
            case .read(let index, let problems):
                let state = index.map { $0 < 0 ? "empty store" : "state \($0)" } ?? "NO COMMITTED STATE"
                return state + (problems.isEmpty ? "" : ", check: \(problems.prefix(3).joined(separator: "; "))")
            case .typed(let error): return "StrataError \(error)"
            case .inconsistent(let detail): return "INCONSISTENT \(detail)"
            case .otherError(let detail): return "NON-STRATA ERROR \(detail)"
            }
        }
    }

    /// Opens `bytes` through `layer` (read-only or read-write) and reads everything; a
    /// writable open then takes a write and reads it back.
    static func examine(_ bytes: [UInt8], readOnly: Bool, layer: FuzzLayer, fixture: FuzzFixture) -> Outcome {
        do {
            let (fs, path, simulated) = try layer.place(bytes, name: "store.strata")
            var options = FuzzFixture.options(fs)
            options.readOnly = readOnly
            // `normal`: the write after recovery does not preallocate (and copy) a MiB of zeros.
            options.durability = .normal
            let mutationsBefore = simulated?.mutationCount ?? 0
            let store = try Store(path: path, options: options)
            return try withExtendedLifetime(store) { () throws -> Outcome in
                // A writable simulated store is dropped without its closing checkpoint (its I/O
                // stops here); a real file is closed.
                defer {
                    if !readOnly, let simulated { simulated.crashAfter(operations: 0) } else { try? store.close() }
                }
                let content = try store.read { try digestContent($0, thorough: true) }
                let report = try store.check()
                let index: Int? = content == ContentDigest() && !fixture.states.contains(content)
                    ? -1 : fixture.states.firstIndex(of: content)
                if readOnly, let simulated, simulated.mutationCount != mutationsBefore {
                    return .inconsistent("the read-only open wrote to the file system")
                }
                if !readOnly {
                    // The recovered store takes a write.
                    try store.write { tx in
                        try tx.treeCreatingIfMissing("zz-fuzz").put(Array("k".utf8), Array("v".utf8))
                    }
                    guard try store.read({ try $0.tree("zz-fuzz")?.get(Array("k".utf8)) }) == Array("v".utf8) else {
                        return .inconsistent("a write after recovery cannot be read back")
                    }
                }
                return .read(index: index, checkProblems: report.problems)
            }
        } catch let error as StrataError {
            return .typed(error)
        } catch let failure as ToolError where failure.kind == .wrongResult {
            return .inconsistent(failure.description)
        } catch {
            return .otherError(String(describing: error))
        }
    }

    /// The four opens of a case: read-only and read-write, simulated and through POSIX.
    static func examineAll(_ bytes: [UInt8], posixDirectory: String, fixture: FuzzFixture) -> [(String, Outcome)] {
        let posix = FuzzLayer.posix(directory: posixDirectory)
        return [("read-only", examine(bytes, readOnly: true, layer: .simulated, fixture: fixture)),
                ("read-write", examine(bytes, readOnly: false, layer: .simulated, fixture: fixture)),
                ("read-only POSIX", examine(bytes, readOnly: true, layer: posix, fixture: fixture)),
                ("read-write POSIX", examine(bytes, readOnly: false, layer: posix, fixture: fixture))]
    }

    /// The line a worker prints for a case: `I`, `C`, `P`, `E kind: …` or `W …`.
    static func judge(_ fuzzCase: FuzzCase, outcomes: [(String, Outcome)], fixture: FuzzFixture) -> String {
        var wrong: [String] = []
        var typed: StrataError?
        var prefix = false
        var flagged = false
        for (mode, outcome) in outcomes {
            switch outcome {
            case .read(let index, let problems):
                if !problems.isEmpty { flagged = true }
                guard let index else {
                    let check = problems.isEmpty ? "" : " (check: \(problems.prefix(2).joined(separator: "; ")))"
                    wrong.append("\(mode): content is no committed state\(check)")
                    continue
                }
                if !fuzzCase.allowed.contains(index) {
                    let state = index < 0 ? "an empty store" : "state \(index)"
                    let check = problems.isEmpty ? "" : " (check: \(problems.prefix(2).joined(separator: "; ")))"
                    wrong.append("\(mode): opened as \(state), allowed \(fuzzCase.allowed.sorted())\(check)")
                } else if index != fixture.full {
                    prefix = true
                }
            case .typed(let error): typed = typed ?? error
            case .inconsistent(let detail): wrong.append("\(mode): \(detail)")
            case .otherError(let detail): wrong.append("\(mode): non-Strata error \(detail)")
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
