import Testing
@testable import StrataStorage
#if canImport(Glibc)
import Glibc
#endif

/// Forged B+tree pages: every checksum valid, one rule of FORMAT.md §4 broken. A small
/// generator builds each forgery as a real store file (leaf pages, a branch root, a checkpoint
/// and a header slot pointing at them); every reader — open, point reads, cursors both ways,
/// `check` — must fail with `corrupt` or report a problem, and never return keys out of order,
/// trap or fail with another error.
@Suite struct ForgedPageTests {
    static let pageSize = 4096

    enum CellValue {
        case inline([UInt8])
        /// A reference to the `index`-th genuine overflow frame of the file, or to a raw offset.
        case overflow(Int)
        case overflowAt(UInt64, length: Int)
        /// The `index`-th genuine overflow frame, claimed to hold `length` bytes.
        case overflowWithLength(Int, length: Int)
    }

    enum Child {
        case leaf(Int)
        case offset(UInt64)
        /// The offset of the `index`-th leaf plus `delta` (inside a frame, unaligned, …).
        case leafPlus(Int, UInt64)
        case overflowFrame(Int)
        /// The branch page's own offset (a child that is its parent).
        case itself
    }

    struct Forgery: CustomStringConvertible {
        var name: String
        var leaves: [[(key: String, value: CellValue)]]
        /// Cells of the root branch (`nil`: the first leaf is the root).
        var branch: [(key: String, child: Child)]?
        /// The `fragmented` field of every leaf's image (FORMAT.md §4: 0 in an image).
        var leafFragmented: UInt16 = 0
        var description: String { name }
    }

    /// Values written to genuine overflow frames before the pages (an overflow value must be
    /// larger than a quarter page to be legal in a leaf).
    static let overflowValues: [[UInt8]] = [[UInt8](repeating: 0x5A, count: 3000), [UInt8](repeating: 0xA5, count: 5000)]

    static func v(_ s: String) -> CellValue { .inline(Array(s.utf8)) }

    /// The generator: each forgery breaks one rule (order in a page, order across pages, a
    /// shared child, an impossible child or overflow offset) and nothing else.
    static var forgeries: [Forgery] {
        var out: [Forgery] = []
        // Order inside a leaf.
        out.append(Forgery(name: "leaf keys descending", leaves: [[("b", v("1")), ("a", v("2")), ("c", v("3"))]], branch: nil))
        out.append(Forgery(name: "leaf key duplicated", leaves: [[("a", v("1")), ("b", v("2")), ("b", v("3")), ("c", v("4"))]], branch: nil))
        out.append(Forgery(name: "leaf keys descending in a child", leaves: [[("a", v("1")), ("b", v("2"))], [("o", v("3")), ("n", v("4"))]],
                           branch: [("", .leaf(0)), ("m", .leaf(1))]))
        // Order inside a branch, shared children.
        let three: [[(key: String, value: CellValue)]] = [[("a", v("1")), ("b", v("2"))], [("m", v("3")), ("n", v("4"))], [("t", v("5")), ("u", v("6"))]]
        out.append(Forgery(name: "two branch cells share a child", leaves: three, branch: [("", .leaf(0)), ("m", .leaf(0)), ("t", .leaf(2))]))
        out.append(Forgery(name: "two branch cells share the last child", leaves: three, branch: [("", .leaf(0)), ("m", .leaf(1)), ("t", .leaf(1))]))
        out.append(Forgery(name: "branch keys descending", leaves: three, branch: [("", .leaf(0)), ("t", .leaf(1)), ("m", .leaf(2))]))
        out.append(Forgery(name: "branch separator duplicated", leaves: three, branch: [("", .leaf(0)), ("m", .leaf(1)), ("m", .leaf(2))]))
        // Order across pages: a child's keys outside its parent's separator bounds.
        out.append(Forgery(name: "child key below its separator", leaves: [[("a", v("1")), ("b", v("2"))], [("c", v("3")), ("n", v("4"))]],
                           branch: [("", .leaf(0)), ("m", .leaf(1))]))
        out.append(Forgery(name: "child key at the next separator", leaves: [[("a", v("1")), ("m", v("2"))], [("n", v("3")), ("o", v("4"))]],
                           branch: [("", .leaf(0)), ("m", .leaf(1))]))
        out.append(Forgery(name: "middle child key above the next separator",
                           leaves: [[("a", v("1"))], [("m", v("2")), ("u", v("3"))], [("t", v("4")), ("z", v("5"))]],
                           branch: [("", .leaf(0)), ("m", .leaf(1)), ("t", .leaf(2))]))
        out.append(Forgery(name: "children swapped", leaves: three, branch: [("", .leaf(0)), ("m", .leaf(2)), ("t", .leaf(1))]))
        // Child offsets a file cannot hold (≥ 2^63 trapped in PosixFile.read, 2^63−1 was an I/O
        // error), and offsets that point at the wrong place.
        let badChildren: [(String, Child)] = [
            ("2^63", .offset(1 << 63)), ("2^63-1", .offset((1 << 63) - 1)), ("2^64-1", .offset(.max)), ("2^64-8", .offset(.max - 7)),
            ("2^63-8", .offset((1 << 63) - 8)), ("2^62", .offset(1 << 62)), ("0", .offset(0)), ("8", .offset(8)),
            ("4096 (header)", .offset(4096)), ("8184", .offset(8184)), ("past the end of the file", .offset(1 << 30)),
            ("unaligned", .leafPlus(1, 1)), ("inside a leaf frame", .leafPlus(1, 8)), ("an overflow frame", .overflowFrame(0)),
            ("the branch itself", .itself),
        ]
        for (name, child) in badChildren {
            out.append(Forgery(name: "child offset \(name)", leaves: three, branch: [("", .leaf(0)), ("m", child), ("t", .leaf(2))]))
        }
        // Overflow references a file cannot hold, or that point at the wrong frame.
        let badOverflow: [(String, CellValue)] = [
            ("2^63", .overflowAt(1 << 63, length: 3000)), ("2^63-1", .overflowAt((1 << 63) - 1, length: 3000)),
            ("2^64-1", .overflowAt(.max, length: 3000)), ("2^64-16", .overflowAt(.max - 15, length: 3000)), ("0", .overflowAt(0, length: 3000)),
            ("4096 (header)", .overflowAt(4096, length: 3000)), ("past the end of the file", .overflowAt(1 << 30, length: 3000)),
            ("with another length", .overflowWithLength(0, length: 3001)), ("small enough to be inline", .overflowWithLength(0, length: 10)),
            ("to the first checkpoint frame", .overflowAt(Format.logStart, length: 3000)),
        ]
        for (name, value) in badOverflow {
            out.append(Forgery(name: "overflow reference \(name)",
                               leaves: [[("a", v("1")), ("b", .overflow(0))], [("m", v("2")), ("n", value), ("o", .overflow(1))]],
                               branch: [("", .leaf(0)), ("m", .leaf(1))]))
        }
        // An inline value too large to be inline (a writer's split relies on the quarter-page rule).
        out.append(Forgery(name: "inline value larger than a quarter page",
                           leaves: [[("a", .inline([UInt8](repeating: 1, count: 2000))), ("b", v("2"))]], branch: nil))
        // A page image is always packed: fragmented bytes were forged.
        for fragmented: UInt16 in [1, 8, 0xFFFF] {
            var forgery = Forgery(name: "leaf image with \(fragmented) fragmented bytes", leaves: three, branch: [("", .leaf(0)), ("m", .leaf(1)), ("t", .leaf(2))])
            forgery.leafFragmented = fragmented
            out.append(forgery)
        }
        return out
    }

    /// A store whose checkpoint holds one tree "t" built from `forgery`'s pages exactly as given.
    static func build(_ forgery: Forgery, path: String, fs: any FileSystem) throws {
        var options = StoreOptions()
        options.fileSystem = fs
        options.compactOnCloseGarbageRatio = 1
        let store = try Store(path: path, options: options)
        defer { store.abandonForTesting() }
        let log = try store.writableLog()
        var overflow: [(offset: UInt64, length: Int)] = []
        for value in overflowValues {
            let frame = try value.withUnsafeBytes { try log.append(.overflow, txid: 0, payload: $0, compress: false) }
            overflow.append((frame.offset, value.count))
        }
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { scratch.deallocate() }
        func append(_ page: Page, fragmented: UInt16 = 0) throws -> UInt64 {
            let image = page.encodeImage(into: UnsafeMutableRawBufferPointer(start: scratch, count: pageSize))
            scratch.storeBytes(of: fragmented.littleEndian, toByteOffset: 6, as: UInt16.self)
            return try log.append(.page, txid: 0, payload: image, compress: false).offset
        }
        var leafOffsets: [UInt64] = []
        var count: UInt64 = 0
        for cells in forgery.leaves {
            let leaf = Page(pageSize: pageSize, kind: Format.pageKindLeaf, level: 0, owner: 1)
            for (key, value) in cells {
                let k = Array(key.utf8)
                let ok: Bool
                switch value {
                case .inline(let bytes):
                    ok = k.withUnsafeBytes { kb in bytes.withUnsafeBytes { leaf.insertLeafCell(at: leaf.count, key: kb, value: $0, overflowLength: nil) } }
                case .overflow(let index):
                    var ref = overflow[index].offset.littleEndian
                    ok = k.withUnsafeBytes { kb in withUnsafeBytes(of: &ref) { leaf.insertLeafCell(at: leaf.count, key: kb, value: $0, overflowLength: overflow[index].length) } }
                case .overflowWithLength(let index, let length):
                    var ref = overflow[index].offset.littleEndian
                    ok = k.withUnsafeBytes { kb in withUnsafeBytes(of: &ref) { leaf.insertLeafCell(at: leaf.count, key: kb, value: $0, overflowLength: length) } }
                case .overflowAt(let at, let length):
                    var ref = at.littleEndian
                    ok = k.withUnsafeBytes { kb in withUnsafeBytes(of: &ref) { leaf.insertLeafCell(at: leaf.count, key: kb, value: $0, overflowLength: length) } }
                }
                precondition(ok, "forged leaf overflows its page")
                count += 1
            }
            leafOffsets.append(try append(leaf, fragmented: forgery.leafFragmented))
        }
        var root = leafOffsets[0]
        var height: UInt8 = 1
        if let cells = forgery.branch {
            let branch = Page(pageSize: pageSize, kind: Format.pageKindBranch, level: 1, owner: 1)
            // The branch's own offset is where the log ends now (for `.itself`).
            let own = log.end
            for (key, child) in cells {
                let address: UInt64
                switch child {
                case .leaf(let i): address = leafOffsets[i]
                case .offset(let o): address = o
                case .leafPlus(let i, let delta): address = leafOffsets[i] + delta
                case .overflowFrame(let i): address = overflow[i].offset
                case .itself: address = own
                }
                let ok = Array(key.utf8).withUnsafeBytes { branch.insertBranchCell(at: branch.count, key: $0, childAddress: address, child: nil) }
                precondition(ok)
            }
            root = try append(branch)
            precondition(root == own)
            height = 2
        }
        let entry = CheckpointRecord.TreeEntry(id: 1, name: "t", rootOffset: root, count: count, height: height)
        let (offset, length) = try StoreFileWriter.writeCheckpoint(log: log, txid: 0, nextTreeID: 2, trees: [entry], liveBeforeFrame: log.end)
        try log.syncAll()
        let header = FileHeader(pageSize: UInt32(pageSize), sequence: store.header.sequence + 1, checkpointOffset: offset,
                                durableEnd: offset + length, checkpointTxid: 0, fileID: store.header.fileID)
        try StoreFileWriter.writeHeader(header, slot: 1 - store.headerSlot, file: log.file)
        try log.trimToEnd()
    }

    /// What reading a forged file did.
    struct Findings {
        /// Every `corrupt` error met, by step.
        var corrupt: [String] = []
        /// Anything that must never happen: another error, keys out of order, a clean `check`.
        var wrong: [String] = []
    }

    /// Opens the forged file read-only and read-write and reads it every way there is.
    static func examine(_ forgery: Forgery, path: String, fs: any FileSystem) -> Findings {
        var findings = Findings()
        func attempt<T>(_ step: String, _ body: () throws -> T) -> T? {
            do { return try body() } catch let e as StrataError {
                if case .corrupt = e { findings.corrupt.append("\(step): \(e)") } else { findings.wrong.append("\(step): \(e) (expected corrupt)") }
            } catch {
                findings.wrong.append("\(step): non-Strata error \(error)")
            }
            return nil
        }
        for readOnly in [true, false] {
            let mode = readOnly ? "read-only" : "read-write"
            var options = StoreOptions()
            options.fileSystem = fs
            options.readOnly = readOnly
            options.compactOnCloseGarbageRatio = 1
            guard let store = attempt("\(mode) open", { try Store(path: path, options: options) }) else { continue }
            defer { store.abandonForTesting() }
            let before = findings.corrupt.count
            // Point reads of every key the forgery holds.
            for cells in forgery.leaves {
                for (key, _) in cells {
                    _ = attempt("\(mode) get \(key)", { try store.read { try $0.tree("t")?.get(Array(key.utf8)) } })
                }
            }
            // Cursor walks both ways, values copied (overflow values read).
            _ = attempt("\(mode) forward walk") {
                try store.read { tx in
                    let c = try #require(try tx.tree("t")).makeCursor()
                    var previous: [UInt8]?
                    var ok = try c.first()
                    while ok {
                        let k = c.copyKey()
                        _ = try c.copyValue()
                        if let previous, compareBytes(previous, k) >= 0 { findings.wrong.append("\(mode) forward walk: key \(k) after \(previous)") }
                        previous = k
                        ok = try c.next()
                    }
                }
            }
            _ = attempt("\(mode) backward walk") {
                try store.read { tx in
                    let c = try #require(try tx.tree("t")).makeCursor()
                    var previous: [UInt8]?
                    var ok = try c.last()
                    while ok {
                        let k = c.copyKey()
                        _ = try c.copyValue()
                        if let previous, compareBytes(k, previous) >= 0 { findings.wrong.append("\(mode) backward walk: key \(k) before \(previous)") }
                        previous = k
                        ok = try c.previous()
                    }
                }
            }
            if findings.corrupt.count == before {
                findings.wrong.append("\(mode): opened and read without any corrupt error")
            }
            if let report = attempt("\(mode) check", { try store.check() }), report.isClean {
                findings.wrong.append("\(mode): check() found nothing")
            }
        }
        return findings
    }

    /// Every forgery on the simulated file system.
    @Test func forgedPagesAreCorruptNeverWrongData() throws {
        for forgery in ForgedPageTests.forgeries {
            let fs = SimulatedFileSystem()
            try ForgedPageTests.build(forgery, path: relPath, fs: fs)
            let findings = ForgedPageTests.examine(forgery, path: relPath, fs: fs)
            #expect(findings.wrong.isEmpty, "\(forgery): \(findings.wrong)")
        }
    }

    /// The same on real files through `PosixFile`, in a child process: an offset a file cannot
    /// hold must not trap (`off_t` conversion) nor surface as an I/O error.
    @Test func forgedPagesOnRealFilesDoNotTrap() async {
        await #expect(processExitsWith: .success, "forged pages on real files") {
            var failed = false
            for (i, forgery) in ForgedPageTests.forgeries.enumerated() {
                var template = Array("/tmp/strata-forged-XXXXXX".utf8CString)
                guard let dir = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else { exit(2) }
                defer { _ = system("rm -rf '\(dir)'") }
                let path = "\(dir)/forged-\(i).strata"
                try ForgedPageTests.build(forgery, path: path, fs: PosixFileSystem())
                let findings = ForgedPageTests.examine(forgery, path: path, fs: PosixFileSystem())
                if !findings.wrong.isEmpty {
                    print("\(forgery): \(findings.wrong)")
                    failed = true
                }
            }
            exit(failed ? 1 : 0)
        }
    }
}
