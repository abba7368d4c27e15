import Foundation
import Testing
@testable import StrataStorage

/// The format's fixed limits (FORMAT.md §2, §3, §5), met by a writer: each is refused with
/// ``StrataError/limitExceeded(what:limit:)`` (or, read from a file, `corrupt`) before anything
/// is written, never by a trap or by a frame that recovery would refuse.
@Suite struct LimitTests {
    /// A header slot with sequence 2^64 − 1 (checksum valid) was found by `strata-harness fuzz`
    /// to trap the next checkpoint's `sequence + 1`. No writer writes it: it is corrupt, like any
    /// impossible field, in either slot, for read-only and writable opens.
    @Test func headerSequenceWithoutSuccessorIsCorrupt() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("s.strata")
        let store = try Store(path: path, options: testOptions())
        try store.write { tx in try tx.createTree("t").put(key(1), key(1)) }
        try store.checkpoint()
        try store.close()
        let original = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        for slot in 0...1 {
            var b = original
            b.setLittleEndian(UInt64.max, at: ReferenceFormat.HeaderSlot.position(of: .sequence, slot: slot), width: 8)
            ReferenceFormat.HeaderSlot.reseal(&b, slot: slot)
            #expect(FileManager.default.createFile(atPath: path, contents: Data(b)))
            for readOnly in [true, false] {
                var options = testOptions()
                options.readOnly = readOnly
                do {
                    let s = try Store(path: path, options: options)
                    try? s.close()
                    Issue.record("slot \(slot), readOnly \(readOnly): opened")
                } catch StrataError.corrupt(let what, _) {
                    #expect(what.contains("sequence"), "slot \(slot): \(what)")
                }
            }
        }
    }

    /// A commit record longer than 1 GiB would be a frame every reader refuses (a store that
    /// cannot be opened again): the log writer refuses the payload before writing a byte, and
    /// the store goes on. The buffer is allocated but never touched (no 1 GiB of memory used).
    @Test func recordsPastTheFormatLimitAreRefusedBeforeWriting() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("s.strata")
        let store = try Store(path: path, options: testOptions())
        try store.write { tx in try tx.createTree("t").put(key(1), key(1)) }
        let size = try store.info().fileBytes
        for type in [FrameType.commit, .checkpoint] {
            let huge = UnsafeMutableRawBufferPointer.allocate(byteCount: Format.maxRecordLength + 1, alignment: 8)
            defer { huge.deallocate() }
            #expect(throws: StrataError.limitExceeded(what: "\(type) record", limit: UInt64(Format.maxRecordLength))) {
                try store.writableLog().append(type, txid: 99, payload: UnsafeRawBufferPointer(huge), compress: false)
            }
        }
        #expect(try store.info().fileBytes == size)
        try store.write { tx in try #require(try tx.tree("t")).put(key(2), key(2)) }
        try store.close()
        let again = try Store(path: path, options: testOptions())
        #expect(try again.snapshot().tree("t")?.get(key(2)) == key(2))
        try again.close()
    }

    /// A store's tree ids run out after 2^32 − 2 creations (dropped trees included): the last
    /// id is given and survives a reopen (replay) and a checkpoint; the next creation throws
    /// `limitExceeded` and the transaction stays usable.
    @Test func treeIDsRunOutWithATypedError() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("s.strata")
        let store = try Store(path: path, options: testOptions())
        try store.write { tx in
            tx.nextTreeID = StoreLimits.treeIDLimit - 1
            try tx.createTree("last").put(key(1), key(1))
            #expect(throws: StrataError.limitExceeded(what: "tree ids", limit: UInt64(StoreLimits.treeIDLimit))) {
                try tx.createTree("one too many")
            }
            try #require(try tx.tree("last")).put(key(2), key(2))
        }
        try store.close()
        for step in ["replay", "checkpoint"] {
            let s = try Store(path: path, options: testOptions())
            #expect(try s.snapshot().tree("last")?.get(key(2)) == key(2), "\(step)")
            #expect(throws: StrataError.limitExceeded(what: "tree ids", limit: UInt64(StoreLimits.treeIDLimit))) {
                try s.write { tx in _ = try tx.createTree("another") }
            }
            if step == "replay" { try s.checkpoint() }
            try s.close()
        }
        let s = try Store(path: path, options: testOptions())
        #expect(try s.check().isClean)
        try s.close()
    }
}
