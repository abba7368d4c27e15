import Testing
@testable import StrataStorage
#if canImport(Glibc)
import Glibc
#endif

/// Damaged files must open with the right data (or a prefix the format cannot tell from a torn
/// tail) or fail with a `StrataError` — never trap, hang, allocate hugely or return wrong data.
@Suite struct CorruptionTests {
    /// A real store: several trees, a few thousand keys, overflow values, a checkpoint, then
    /// commits after it (left in the log as after a crash: no close).
    struct Fixture {
        var bytes: [UInt8]
        var logEnd: UInt64
        var checkpointOffset: UInt64
        var headerDurableEnd: UInt64
        /// Every frame of the log, in order.
        var frames: [(offset: UInt64, length: UInt64, type: FrameType, txid: UInt64)]
        /// `states[k]`: content after the checkpoint plus its first `k` later commits.
        var states: [RelTrees]
        var prints: [RelPrint] = []
        /// End offset of the k-th commit frame after the checkpoint (index k-1).
        var commitEnds: [UInt64]
        /// Where the frames of the last commit (its overflow frame, then its commit frame) begin:
        /// damage from here on may look like a torn tail.
        var lastCommitRegion: UInt64
        var full: Int { states.count - 1 }
    }

    /// Built once; `nil` (and every test fails at `#require`) if the engine cannot build it.
    static let fixtureOrNil: Fixture? = {
        do { return try makeFixture() } catch {
            print("CorruptionTests: building the fixture failed: \(error)")
            return nil
        }
    }()

    static var fixture: Fixture { fixtureOrNil! }

    static func makeFixture() throws -> Fixture {
        let fs = SimulatedFileSystem()
        var o = relOptions(fs)
        o.checkpointLogBytes = 1 << 30
        o.checkpointDirtyBytes = 1 << 30
        let store = try Store(path: relPath, options: o)
        var rng = SeededRandom(seed: 99)
        try store.write { tx in
            let users = try tx.createTree("users")
            let orders = try tx.createTree("orders")
            let blobs = try tx.createTree("blobs")
            for i in 0..<1500 { try users.put(key(i), randomBytes(Int.random(in: 10...120, using: &rng), &rng)) }
            for i in 0..<1000 { try orders.put(bytes("order-\(i * 7)"), bytes("amount \(i)")) }
            for i in 0..<16 {
                let n = Int.random(in: 2_000...8_000, using: &rng)
                try blobs.put(key(i), i % 2 == 0 ? randomBytes(n, &rng) : [UInt8](repeating: UInt8(i), count: n))
            }
        }
        for round in 0..<4 {
            try store.write { tx in
                let users = try tx.tree("users")!
                for _ in 0..<100 { try users.put(key(Int.random(in: 0..<1500, using: &rng)), bytes("updated \(round)")) }
                for _ in 0..<30 { _ = try users.delete(key(Int.random(in: 0..<1500, using: &rng))) }
            }
        }
        try store.checkpoint()
        var states = [try relReadAll(store)]
        var commitEnds: [UInt64] = []
        var lastCommitRegion: UInt64 = 0
        for c in 0..<8 {
            if c == 7 { lastCommitRegion = try store.writableLog().end }
            try store.write { tx in
                if c == 3 { try tx.createTree("late").put(bytes("x"), bytes("y")) }
                let orders = try tx.tree("orders")!
                for _ in 0..<5 { try orders.put(bytes("order-\(Int.random(in: 0..<9000, using: &rng))"), bytes("c\(c)")) }
                _ = try tx.tree("users")!.delete(key(Int.random(in: 0..<1500, using: &rng)))
                if c == 7 { try tx.tree("blobs")!.put(bytes("last"), randomBytes(5_000, &rng)) }
            }
            commitEnds.append(try store.writableLog().end)
            states.append(try relReadAll(store))
        }
        let logEnd = try store.writableLog().end
        let fixture = Fixture(
            bytes: [], logEnd: logEnd, checkpointOffset: store.header.checkpointOffset,
            headerDurableEnd: store.header.durableEnd, frames: [], states: states,
            commitEnds: commitEnds, lastCommitRegion: lastCommitRegion)
        store.abandonForTesting()
        // The file as a crash would leave it: the log, then (part of) the preallocated zeros.
        var image = Array(fs.contents(of: relPath)!.prefix(Int(logEnd)))
        image += [UInt8](repeating: 0, count: 4096)
        var f = fixture
        f.bytes = image
        f.prints = states.map(RelPrint.init)
        // The frame map.
        let scan = SimulatedFileSystem()
        scan.setContents(image, of: "/scan")
        let file = try scan.open("/scan", mode: .readOnly)
        let reader = FrameReader(file: file)
        var offset = Format.logStart
        while let h = try reader.header(at: offset, limit: logEnd) {
            f.frames.append((offset, h.frameLength, h.type, h.txid))
            offset += h.frameLength
        }
        guard offset == logEnd else { throw RelFailure("frame map stops at \(offset), log ends at \(logEnd)") }
        return f
    }

    enum Outcome: CustomStringConvertible {
        case state(Int)
        case failed(StrataError)
        var description: String {
            switch self {
            case .state(let i): return "state \(i)"
            case .failed(let e): return "error \(e)"
            }
        }
    }

    /// Opens `bytes` on a fresh simulated file system and reads everything. Records an issue for
    /// any outcome other than a state in `allowed` or a `StrataError`.
    @discardableResult
    static func examine(_ bytes: [UInt8], readOnly: Bool, allowed: Set<Int>, label: String) -> Outcome? {
        let f = fixture
        let fs = SimulatedFileSystem()
        fs.setContents(bytes, of: relPath)
        var o = relOptions(fs)
        o.readOnly = readOnly
        o.cacheBytes = 1 << 20
        let clock = ContinuousClock()
        let start = clock.now
        defer {
            let took = clock.now - start
            if took > .seconds(5) { Issue.record("\(label): took \(took)") }
        }
        do {
            let store = try Store(path: relPath, options: o)
            defer { if readOnly { try? store.close() } else { store.abandonForTesting() } }
            let content = try store.read { try RelPrint($0) }
            // Point reads too (another path than the cursor): a sample of every tree.
            try store.read { tx in
                for name in try tx.treeNames {
                    let t = try tx.tree(name)!
                    let c = t.makeCursor()
                    var ok = try c.first()
                    var n = 0
                    while ok {
                        if n % 37 == 0, try t.get(c.copyKey()) != c.copyValue() {
                            throw RelFailure("get disagrees with the cursor in '\(name)'")
                        }
                        n += 1
                        ok = try c.next()
                    }
                }
            }
            _ = try store.check()
            guard let i = f.prints.firstIndex(of: content) else {
                let full = try relReadAll(store)
                Issue.record("\(label): opened with data that is no committed state: \(relDiff(f.states[f.full], full))")
                return nil
            }
            if !allowed.contains(i) {
                Issue.record("\(label): opened as state \(i), allowed \(allowed.sorted()) (silently lost history)")
            }
            return .state(i)
        } catch let e as StrataError {
            return .failed(e)
        } catch {
            Issue.record("\(label): non-Strata error \(error)")
            return nil
        }
    }

    /// Number of post-checkpoint commits wholly inside the first `length` bytes.
    static func commitsWithin(_ length: Int) -> Int {
        fixture.commitEnds.filter { $0 <= UInt64(length) }.count
    }

    // Forging goes through the reference codec (StrataTesting's `ReferenceFormat`, FORMAT.md
    // read a second time): a forgery's checksums do not come from the code under test.
    typealias HeaderSlot = ReferenceFormat.HeaderSlot
    typealias FrameField = ReferenceFormat.FrameHeader.Field

    static let extremes: [UInt64] = [0, 1, 0xFFFF_FFFF, 0x8000_0000, UInt64.max, UInt64.max - 7]

    /// The bounded fuzz loop: bit flips, overwritten runs, truncations, appended garbage, frame
    /// and header fields set to extremes (with and without a valid header checksum).
    @Test func seededMutations() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        let cases = 2000
        var rng = SeededRandom(seed: 2024)
        var tally: [String: Int] = [:]
        for n in 0..<cases {
            var b = f.bytes
            var allowed: Set<Int> = [f.full]
            var what: String
            /// A damaged offset: mostly in the log, sometimes in the header slots.
            func offset() -> Int {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: return Int.random(in: 0..<ReferenceFormat.slotLength, using: &rng)
                    + HeaderSlot.start(ofSlot: Int.random(in: 0...1, using: &rng))
                case 1: return Int.random(in: 0..<b.count, using: &rng)
                default: return Int.random(in: Int(Format.logStart)..<Int(f.logEnd), using: &rng)
                }
            }
            /// Damage reaching the last commit's frames may read as a torn tail.
            func damaged(upTo x: Int) {
                if x >= Int(f.lastCommitRegion) { allowed.insert(f.full - 1) }
            }
            switch n % 7 {
            case 0:
                let flips = Int.random(in: 1...4, using: &rng)
                var at: [Int] = []
                for _ in 0..<flips {
                    let x = offset()
                    b[x] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                    at.append(x)
                }
                damaged(upTo: at.max()!)
                what = "bit flips at \(at)"
            case 1:
                let x = offset()
                let length = min(Int.random(in: 1...600, using: &rng), b.count - x)
                let fill = Int.random(in: 0..<3, using: &rng)
                for i in x..<(x + length) { b[i] = fill == 0 ? 0 : fill == 1 ? 0xFF : UInt8.random(in: 0...255, using: &rng) }
                damaged(upTo: x + length - 1)
                what = "run of \(length) \(["zeros", "0xFF", "random"][fill]) at \(x)"
            case 2:
                let length = Int.random(in: 0..<10, using: &rng) == 0 ? Int.random(in: 0...Int(Format.logStart), using: &rng)
                    : Int.random(in: Int(f.checkpointOffset)...b.count, using: &rng)
                b.removeSubrange(length...)
                allowed = [length >= Int(f.logEnd) ? f.full : CorruptionTests.commitsWithin(length)]
                what = "truncated to \(length)"
            case 3:
                b.removeSubrange(Int(f.logEnd)...)
                if Bool.random(using: &rng) {
                    b += randomBytes(Int.random(in: 1...5000, using: &rng), &rng)
                    what = "random garbage appended"
                } else {
                    // A stale copy of an old frame after the log (as a reused block would hold).
                    let fr = f.frames.randomElement(using: &rng)!
                    b += Array(b[Int(fr.offset)..<Int(fr.offset + fr.length)])
                    what = "copy of the \(fr.type) frame at \(fr.offset) appended"
                }
            case 4:
                let fr = f.frames.randomElement(using: &rng)!
                let at = Int(fr.offset)
                let fields: [FrameField] = [.storedLength, .rawLength, .txid, .durableEnd, .type, .flags]
                let field = fields[Int.random(in: 0..<fields.count, using: &rng)]
                let v = CorruptionTests.extremes.randomElement(using: &rng)!
                b.setLittleEndian(v, at: at + field.offset, width: field.width)
                let sealed = Int.random(in: 0..<10, using: &rng) < 7
                if sealed { ReferenceFormat.Frame.resealHeader(&b, frameAt: at) }
                damaged(upTo: at)
                what = "\(fr.type) frame at \(at): field \(field.name) = \(v)\(sealed ? " (resealed)" : "")"
            case 5:
                let slot = Int.random(in: 0...1, using: &rng)
                let fields: [HeaderSlot.Field] = [.formatVersion, .pageSize, .sequence, .checkpointOffset, .durableEnd,
                                                  .checkpointTxid, .flags]
                let field = fields.randomElement(using: &rng)!
                let v = CorruptionTests.extremes.randomElement(using: &rng)!
                b.setLittleEndian(v, at: HeaderSlot.position(of: field, slot: slot), width: field.width)
                let sealed = Int.random(in: 0..<10, using: &rng) < 7
                if sealed { HeaderSlot.reseal(&b, slot: slot) }
                what = "header slot \(slot): \(field.name) = \(v)\(sealed ? " (resealed)" : "")"
            default:
                // A lost sector or block: zeros (or stale garbage) in place of 512 / 4096 bytes.
                let size = Bool.random(using: &rng) ? 512 : 4096
                let x = Int.random(in: 0..<(b.count / size), using: &rng) * size
                let zero = Bool.random(using: &rng)
                for i in x..<min(b.count, x + size) { b[i] = zero ? 0 : UInt8.random(in: 0...255, using: &rng) }
                damaged(upTo: x + size - 1)
                what = "\(size)-byte block at \(x) \(zero ? "zeroed" : "scrambled")"
            }
            for readOnly in [true, false] {
                let label = "seed 2024 case \(n) (\(what)), \(readOnly ? "read-only" : "read-write")"
                let outcome = CorruptionTests.examine(b, readOnly: readOnly, allowed: allowed, label: label)
                switch outcome {
                case .state(let i)?: tally[i == f.full ? "intact" : "prefix", default: 0] += 1
                case .failed(let e)?:
                    switch e {
                    case .corrupt: tally["corrupt", default: 0] += 1
                    case .notAStrataFile: tally["notAStrataFile", default: 0] += 1
                    default: tally["\(e)".prefix(20).description, default: 0] += 1
                    }
                case nil: tally["FAILED", default: 0] += 1
                }
            }
        }
        print("CorruptionTests: \(cases) mutations × 2 opens: \(tally.sorted { $0.key < $1.key })")
    }

    /// A bit flip inside an already-synced commit frame that has valid frames after it is
    /// corruption, never a silently shorter history. Only the very last frame is allowed to
    /// look like a torn tail (FORMAT.md §8).
    @Test func flipInSyncedCommitFrameIsCorrupt() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        let commits = f.frames.filter { $0.type == .commit && $0.offset > f.checkpointOffset }
        #expect(commits.count == f.full)
        var rng = SeededRandom(seed: 7)
        for (j, fr) in commits.enumerated() {
            for place in ["header", "payload"] {
                var b = f.bytes
                // The header bytes its checksum covers, or the payload (never the padding).
                let payloadBytes = Int(fr.length) - ReferenceFormat.frameHeaderLength - ReferenceFormat.frameAlignment
                let headerBytes = FrameField.headerChecksum.offset
                let at = place == "header" ? Int(fr.offset) + Int.random(in: 0..<headerBytes, using: &rng)
                    : Int(fr.offset) + ReferenceFormat.frameHeaderLength + Int.random(in: 0..<payloadBytes, using: &rng)
                b[at] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                for readOnly in [true, false] {
                    let label = "seed 7: flip in the \(place) of commit \(j + 1) of \(commits.count) at \(at) (\(readOnly ? "read-only" : "read-write"))"
                    let outcome = CorruptionTests.examine(b, readOnly: readOnly, allowed: j == commits.count - 1 ? [j] : [], label: label)
                    if j < commits.count - 1 {
                        guard case .failed(.corrupt)? = outcome else {
                            Issue.record("\(label): expected .corrupt, got \(outcome.map { "\($0)" } ?? "an issue")")
                            continue
                        }
                    }
                }
            }
        }
    }

    /// The same for page frames the checkpoint reaches and for the checkpoint frame itself.
    @Test func flipInCheckpointOrReachablePageIsCorrupt() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        var b = f.bytes
        let nextTreeIDAt = ReferenceFormat.frameHeaderLength + ReferenceFormat.CheckpointRecord.nextTreeIDPosition
        b[Int(f.checkpointOffset) + nextTreeIDAt] ^= 0x10
        for readOnly in [true, false] {
            let outcome = CorruptionTests.examine(b, readOnly: readOnly, allowed: [], label: "checkpoint frame flip")
            guard case .failed(.corrupt)? = outcome else { Issue.record("checkpoint frame flip: \(String(describing: outcome))"); continue }
        }
        // Every page frame written by the last checkpoint is reachable from it.
        let pages = f.frames.filter { $0.type == .page }
        let lastCheckpointPages = pages.filter { fr in
            fr.offset < f.checkpointOffset && !f.frames.contains { $0.type == .checkpoint && $0.offset > fr.offset && $0.offset < f.checkpointOffset }
        }
        #expect(lastCheckpointPages.count > 20)
        for fr in lastCheckpointPages.prefix(40) {
            var d = f.bytes
            let payloadBytes = Int(fr.length) - ReferenceFormat.frameHeaderLength - ReferenceFormat.frameAlignment
            d[Int(fr.offset) + ReferenceFormat.frameHeaderLength + payloadBytes / 2] ^= 0x01
            let outcome = CorruptionTests.examine(d, readOnly: true, allowed: [], label: "page frame at \(fr.offset)")
            guard case .failed(.corrupt)? = outcome else { Issue.record("page frame at \(fr.offset): \(String(describing: outcome))"); continue }
        }
    }

    /// Regression (found by `strata-harness fuzz`, frame splicing): a whole valid page frame
    /// copied over another page frame read as the page its parent pointed at — keys out of
    /// order, wrong data, every checksum intact. The header checksum now covers the frame's own
    /// offset.
    @Test func validFrameCopiedElsewhereIsCorrupt() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        let pages = f.frames.filter { $0.type == .page && $0.offset < f.checkpointOffset }
        var rng = SeededRandom(seed: 11)
        var corrupt = 0
        for _ in 0..<40 {
            let from = pages[Int.random(in: 0..<pages.count, using: &rng)]
            let to = pages[Int.random(in: 0..<pages.count, using: &rng)]
            guard from.offset != to.offset, from.length <= to.length else { continue }
            var b = f.bytes
            b.replaceSubrange(Int(to.offset)..<Int(to.offset + from.length), with: f.bytes[Int(from.offset)..<Int(from.offset + from.length)])
            let label = "seed 11: frame at \(from.offset) copied over \(to.offset)"
            // Either the page is no longer reachable (its old copy was replaced) or it is corrupt.
            if case .failed(.corrupt)? = CorruptionTests.examine(b, readOnly: true, allowed: [f.full], label: label) { corrupt += 1 }
        }
        #expect(corrupt > 0)
    }

    /// Regression (found by `strata-harness fuzz`, a checkpoint's entry count forged to 2^63
    /// with its checksums recomputed): `Int(count)` trapped. Counts above 2^48 are now corrupt.
    @Test func forgedEntryCountIsCorruptNotATrap() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        // The first tree entry's count ("blobs"), in the checkpoint payload.
        let checkpoint = try ReferenceFormat.Frame(in: f.bytes, at: Int(f.checkpointOffset))
        let firstEntry = try #require(ReferenceFormat.CheckpointRecord.entryPlaces(in: checkpoint.payload).first)
        #expect(checkpoint.payload[(firstEntry.nameLengthPosition + 2)...].starts(with: bytes("blobs")))
        let at = Int(f.checkpointOffset) + ReferenceFormat.frameHeaderLength + firstEntry.entryCountPosition
        for forged in [UInt64(1) << 63, UInt64.max, (UInt64(1) << 48) + 1] {
            var b = f.bytes
            b.setLittleEndian(forged, at: at, width: 8)
            ReferenceFormat.Frame.reseal(&b, frameAt: Int(f.checkpointOffset))
            for readOnly in [true, false] {
                let outcome = CorruptionTests.examine(b, readOnly: readOnly, allowed: [], label: "entry count \(forged)")
                guard case .failed(.corrupt)? = outcome else { Issue.record("entry count \(forged): \(String(describing: outcome))"); continue }
            }
        }
    }

    /// Regression (found by `strata-harness fuzz`): a synced commit frame whose type was forged to
    /// "page" (checksums recomputed) was skipped, the next commit broke the txid sequence and
    /// recovery stopped there as at a torn tail, silently dropping two synced commits. A valid
    /// transaction out of sequence whose durable end covers its first frame is now corrupt.
    @Test func syncedCommitMissingFromTheSequenceIsCorrupt() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        let commits = f.frames.filter { $0.type == .commit && $0.offset > f.checkpointOffset }
        for fr in commits.dropLast() {
            var b = f.bytes
            b[Int(fr.offset) + FrameField.type.offset] = ReferenceFrameType.page.rawValue
            ReferenceFormat.Frame.resealHeader(&b, frameAt: Int(fr.offset))
            for readOnly in [true, false] {
                let outcome = CorruptionTests.examine(b, readOnly: readOnly, allowed: [], label: "commit \(fr.txid) retyped")
                guard case .failed(.corrupt)? = outcome else { Issue.record("commit \(fr.txid) retyped: \(String(describing: outcome))"); continue }
            }
        }
    }

    /// A damaged newest header slot falls back to the older one (full data); both damaged is corrupt.
    @Test func headerSlots() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        let slots = (0...1).map { HeaderSlot.read(f.bytes, slot: $0) }
        let newest = slots.enumerated().max { a, b in
            guard case .sealed(let x) = a.element else { return true }
            guard case .sealed(let y) = b.element else { return false }
            return x.sequence < y.sequence
        }!.offset
        // A byte of the sequence: the slot's checksum no longer matches.
        let sequenceByte = HeaderSlot.Field.sequence.offset + 4
        var one = f.bytes
        one[HeaderSlot.start(ofSlot: newest) + sequenceByte] ^= 0xFF
        for readOnly in [true, false] {
            #expect(CorruptionTests.examine(one, readOnly: readOnly, allowed: [f.full], label: "newest slot damaged").map { "\($0)" } == "state \(f.full)")
        }
        var both = one
        both[HeaderSlot.start(ofSlot: 1 - newest) + sequenceByte] ^= 0xFF
        for readOnly in [true, false] {
            let outcome = CorruptionTests.examine(both, readOnly: readOnly, allowed: [], label: "both slots damaged")
            guard case .failed(.corrupt)? = outcome else { Issue.record("both slots damaged: \(String(describing: outcome))"); continue }
        }
        // Garbage files and empty files.
        var rng = SeededRandom(seed: 3)
        for n in [0, 10, 8192, 9000, 70_000] {
            let outcome = CorruptionTests.examine(randomBytes(n, &rng), readOnly: true, allowed: [], label: "\(n) random bytes")
            guard case .failed? = outcome else { Issue.record("\(n) random bytes: \(String(describing: outcome))"); continue }
        }
    }

    /// A header-slot forgery: the field, the forged value, the error expected.
    typealias SlotForgery = (field: HeaderSlot.Field, value: UInt64, expected: StrataError, name: String)

    static let slotForgeries: [SlotForgery] = [
        (.formatVersion, UInt64(Format.version) + 1,
         .unsupportedFormatVersion(found: Format.version + 1, supported: Format.version), "the next format version"),
        (.formatVersion, 0xFFFF_FFFF, .unsupportedFormatVersion(found: 0xFFFF_FFFF, supported: Format.version),
         "format version 2^32-1"),
        (.formatVersion, 0, .corrupt("", offset: 0), "format version 0"),
        (.pageSize, 1024, .corrupt("", offset: 0), "page size 1024"),
        (.pageSize, 6000, .corrupt("", offset: 0), "page size 6000"),
        (.pageSize, 65536, .corrupt("", offset: 0), "page size 65536"),
        (.pageSize, 0, .corrupt("", offset: 0), "page size 0"),
        (.pageSize, 8192, .corrupt("", offset: 0), "page size 8192 (the other slot says 4096)"),
        (.fileID, 12345, .corrupt("", offset: 0), "another file id"),
        (.flags, 1, .corrupt("", offset: 0), "flags 1"),
        (.flags, 0x8000_0000, .corrupt("", offset: 0), "flags 2^31"),
    ]

    /// `bytes` with `forgery` written into header slot `slot`, its checksum recomputed.
    static func forge(_ bytes: [UInt8], slot: Int, _ forgery: SlotForgery) -> [UInt8] {
        var b = bytes
        let at = HeaderSlot.position(of: forgery.field, slot: slot)
        b.setLittleEndian(forgery.value, at: at, width: forgery.field.width)
        HeaderSlot.reseal(&b, slot: slot)
        return b
    }

    /// Regression: a header slot with a valid checksum and a future format version was skipped and
    /// the other slot opened; FORMAT.md §2 refuses such a file. And the rest of §2: a slot whose
    /// checksum is valid but whose version is 0, whose page size is no power of two in
    /// 4096...32768, or whose flags are not 0 was written wrong (it is not torn): the file is
    /// corrupt, whichever slot it is.
    @Test func checksumValidSlotsWithImpossibleFieldsAreRefused() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        let sequences = (0...1).map { f.bytes.littleEndian(at: HeaderSlot.position(of: .sequence, slot: $0), width: 8) }
        let newest = sequences[0] > sequences[1] ? 0 : 1
        for forgery in CorruptionTests.slotForgeries {
            for slot in [newest, 1 - newest] {
                let b = CorruptionTests.forge(f.bytes, slot: slot, forgery)
                for readOnly in [true, false] {
                    let label = "\(forgery.name) in the \(slot == newest ? "newest" : "older") slot (\(readOnly ? "read-only" : "read-write"))"
                    let outcome = CorruptionTests.examine(b, readOnly: readOnly, allowed: [], label: label)
                    switch (outcome, forgery.expected) {
                    case (.failed(.corrupt)?, .corrupt): break
                    case (.failed(let e)?, _) where e == forgery.expected: break
                    default: Issue.record("\(label): expected \(forgery.expected), got \(outcome.map { "\($0)" } ?? "an issue")")
                    }
                }
            }
        }
    }

    // MARK: Forged frames: every checksum valid, one offset or id absurd

    /// Opens the store on `fs` and reads everything; a `StrataError` anywhere is a fine answer.
    static func openAndReadEverything(_ fs: SimulatedFileSystem) {
        for readOnly in [true, false] {
            var o = relOptions(fs)
            o.readOnly = readOnly
            do {
                let store = try Store(path: relPath, options: o)
                _ = try store.read { try RelPrint($0) }
                _ = try store.check()
                if !readOnly { try store.write { tx in try tx.treeCreatingIfMissing("after").put([1], [2]) } }
                store.abandonForTesting()
            } catch is StrataError {
            } catch {
                print("non-Strata error: \(error)")
                exit(3)
            }
        }
    }

    /// A commit frame (checksums valid) whose overflow reference is near `UInt64.max`.
    static func forgedOverflowReference() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { tx in try tx.createTree("t").put([1], [1]) }
        var record = CommitRecordWriter()
        [UInt8](bytes("k")).withUnsafeBytes { record.putOverflow(tree: 1, key: $0, length: 10, frame: UInt64.max - 16) }
        _ = try record.bytes.withUnsafeBytes { try store.writableLog().append(.commit, txid: 2, payload: $0, compress: false) }
        try store.writableLog().syncAll()
        store.abandonForTesting()
        openAndReadEverything(fs)
    }

    /// A checkpoint whose root is a branch page (checksums valid) with a child offset near `UInt64.max`.
    static func forgedChildOffset() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { tx in try tx.createTree("t").put([1], [1]) }
        let branch = Page(pageSize: 4096, kind: Format.pageKindBranch, level: 1, owner: 0)
        _ = branch.insertBranchCell(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), childAddress: UInt64.max - 8, child: nil)
        var scratch = [UInt8](repeating: 0, count: 4096)
        let txid = store.currentVersion.txid
        let page = try scratch.withUnsafeMutableBytes {
            try store.writableLog().append(.page, txid: txid, payload: branch.encodeImage(into: $0), compress: false)
        }
        try forgeCheckpoint(store, txid: txid, trees: [CheckpointRecord.TreeEntry(id: 1, name: "t", rootOffset: page.offset, count: 1, height: 2)])
        store.abandonForTesting()
        openAndReadEverything(fs)
    }

    /// A checkpoint (checksums valid) claiming transaction `UInt64.max`, then one commit frame.
    static func forgedMaximalTransactionID() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { tx in try tx.createTree("t").put([1], [1]) }
        try forgeCheckpoint(store, txid: UInt64.max, trees: [])
        var record = CommitRecordWriter()
        record.createTree(id: 1, name: "u")
        _ = try record.bytes.withUnsafeBytes { try store.writableLog().append(.commit, txid: 0, payload: $0, compress: false) }
        try store.writableLog().syncAll()
        store.abandonForTesting()
        openAndReadEverything(fs)
    }

    static func forgeCheckpoint(_ store: Store, txid: UInt64, trees: [CheckpointRecord.TreeEntry]) throws {
        let (offset, length) = try StoreFileWriter.writeCheckpoint(log: store.writableLog(), txid: txid, nextTreeID: 2, trees: trees, liveBeforeFrame: 0)
        try store.writableLog().syncAll()
        let header = FileHeader(pageSize: 4096, sequence: store.header.sequence + 1, checkpointOffset: offset,
                                durableEnd: offset + length, checkpointTxid: txid, fileID: store.header.fileID)
        try StoreFileWriter.writeHeader(header, slot: 1 - store.headerSlot, file: store.writableLog().file)
    }

    /// Regression, fixed (was an engine bug in PageFile.swift, `FrameReader.header(at:limit:)`: `offset + UInt64(Format.frameHeaderLength) <= limit`):
    /// an offset taken from the file (an overflow reference in a commit record, here during
    /// replay in `Recovery.overflowIsValid`) near `UInt64.max` overflows the addition and traps
    /// instead of failing with `.corrupt`. Fix: `guard offset <= limit, limit - offset >= 40`,
    /// and compare `h.frameLength <= limit - offset` the same way.
    @Test func forgedOverflowReferenceDoesNotTrap() async {
        await #expect(processExitsWith: .success, "replay of a commit whose overflow reference is UInt64.max - 16") {
            try CorruptionTests.forgedOverflowReference()
        }
    }

    /// Regression, fixed (was an engine bug in same line, reached through `PageFile.page(at:level:)` → `load` →
    /// `FrameReader.read`): a branch page's child offset near `UInt64.max` traps on the first
    /// descent into it.
    @Test func forgedChildOffsetDoesNotTrap() async {
        await #expect(processExitsWith: .success, "branch page whose child offset is UInt64.max - 8") {
            try CorruptionTests.forgedChildOffset()
        }
    }

    /// Regression, fixed (was an engine bug in Recovery.swift, replay: `guard h.txid == lastTxid + 1`; also
    /// WriteTransaction.swift `transactionID = base.txid + 1`): a checkpoint whose txid is
    /// `UInt64.max` (header agrees) followed by any valid commit frame traps on the addition.
    /// Fix: reject a checkpoint txid of `UInt64.max` as corrupt (or use `&+` and compare).
    @Test func forgedMaximalTransactionIDDoesNotTrap() async {
        await #expect(processExitsWith: .success, "checkpoint txid UInt64.max followed by a commit frame") {
            try CorruptionTests.forgedMaximalTransactionID()
        }
    }

    /// Regression, fixed (was an engine bug in Store+Check.swift, `check()` → `checkVersion(_, logEnd: nil, …)` for a
    /// read-only store): the frame walk runs to the file's size instead of the log end that
    /// recovery found, so a read-only `check()` of a store with a torn tail (a normal state
    /// after a crash, which a writer silently cuts off) reports "invalid frame header".
    @Test func readOnlyCheckOfTornTailIsClean() throws {
        let f = try #require(CorruptionTests.fixtureOrNil)
        var b = f.bytes
        // Tear the last commit frame: its second half is garbage.
        let last = f.frames.last!
        var rng = SeededRandom(seed: 5)
        for i in Int(last.offset + last.length / 2)..<Int(last.offset + last.length) { b[i] = UInt8.random(in: 0...255, using: &rng) }
        for readOnly in [false, true] {
            let fs = SimulatedFileSystem()
            fs.setContents(b, of: relPath)
            var o = relOptions(fs)
            o.readOnly = readOnly
            let store = try Store(path: relPath, options: o)
            #expect(try relReadAll(store) == f.states[f.full - 1])
            let report = try store.check()
            #expect(report.isClean, "\(readOnly ? "read-only" : "read-write"): \(report.problems)")
            store.abandonForTesting()
        }
    }
}
