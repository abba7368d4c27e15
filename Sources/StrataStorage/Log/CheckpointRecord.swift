/// The payload of a checkpoint frame: the catalog of trees and their roots as of
/// `txid`, plus space accounting (FORMAT.md, "Checkpoint frame").
struct CheckpointRecord: Equatable {
    struct TreeEntry: Equatable {
        var id: UInt32
        var name: String
        /// Offset of the root page frame; 0 for an empty tree.
        var rootOffset: UInt64
        var count: UInt64
        /// Number of levels (0 for an empty tree, 1 for a single leaf).
        var height: UInt8
    }

    var txid: UInt64
    var nextTreeID: UInt32
    /// Bytes of frames reachable from this checkpoint (page and overflow frames), plus this frame.
    var liveBytes: UInt64
    var trees: [TreeEntry]

    func encode() -> [UInt8] {
        var w = ByteWriter()
        w.u64(txid)
        w.u32(nextTreeID)
        w.u64(liveBytes)
        w.u32(UInt32(trees.count))
        for t in trees {
            w.u32(t.id)
            let name = Array(t.name.utf8)
            w.u16(UInt16(name.count))
            w.append(name)
            w.u64(t.rootOffset)
            w.u64(t.count)
            w.u8(t.height)
        }
        return w.bytes
    }

    /// Decodes and checks a checkpoint payload (FORMAT.md §6): exactly `tree count` entries and
    /// nothing after them, a next tree id below 2^32 − 1, names of 1...255 bytes of valid UTF-8
    /// listed once, ids below the next tree id and listed once, a root exactly when the height is not 0, at most 2^48 entries,
    /// none in an empty tree.
    static func decode(_ bytes: UnsafeRawBufferPointer, fileOffset: UInt64) throws -> CheckpointRecord {
        var r = ByteReader(bytes, fileOffset: fileOffset, context: "checkpoint record")
        let txid = try r.u64()
        let next = try r.u32()
        let live = try r.u64()
        // Every id must leave room for the next one: 2^32 − 1 is never a next tree id.
        guard next < UInt32.max else { throw r.fail("next tree id \(next)") }
        let n = try r.count(try r.u32(), "tree count")
        // Each entry is at least 24 bytes: bound the count by what is there before allocating.
        guard n <= r.remaining / 24 else { throw r.fail("tree count \(n) does not fit") }
        var trees: [TreeEntry] = []
        trees.reserveCapacity(n)
        var names = Set<String>()
        var ids = Set<UInt32>()
        for _ in 0..<n {
            let id = try r.u32()
            let nameLength = try r.count(try r.u16(), "tree name length")
            let name = try r.treeName(length: nameLength)
            let root = try r.u64()
            let count = try r.u64()
            let height = try r.u8()
            guard Int(height) <= Format.maxTreeHeight, (root == 0) == (height == 0), id < next else {
                throw r.fail("tree '\(name)' has root \(root), height \(height), id \(id) (next tree id \(next))")
            }
            // A count comes from the file and feeds arithmetic: bound it (an empty tree counts 0).
            guard count <= Format.maxEntryCount, root != 0 || count == 0 else {
                throw r.fail("tree '\(name)' claims \(count) entries")
            }
            guard names.insert(name).inserted else { throw r.fail("tree '\(name)' listed twice") }
            guard ids.insert(id).inserted else { throw r.fail("tree id \(id) listed twice") }
            trees.append(TreeEntry(id: id, name: name, rootOffset: root, count: count, height: height))
        }
        guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes after \(n) trees") }
        return CheckpointRecord(txid: txid, nextTreeID: next, liveBytes: live, trees: trees)
    }
}
