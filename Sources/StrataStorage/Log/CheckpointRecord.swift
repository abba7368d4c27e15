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
        var writer = ByteWriter()
        writer.u64(txid)
        writer.u32(nextTreeID)
        writer.u64(liveBytes)
        writer.u32(UInt32(trees.count))
        for tree in trees {
            writer.u32(tree.id)
            let name = Array(tree.name.utf8)
            writer.u16(UInt16(name.count))
            writer.append(name)
            writer.u64(tree.rootOffset)
            writer.u64(tree.count)
            writer.u8(tree.height)
        }
        return writer.bytes
    }

    /// Decodes and checks a checkpoint payload (FORMAT.md §6): exactly `tree count` entries and
    /// nothing after them, a next tree id below 2^32 − 1, names of 1...255 bytes of valid UTF-8
    /// listed once, ids below the next tree id and listed once, a root exactly when the height
    /// is not 0, at most 2^48 entries, none in an empty tree.
    static func decode(_ bytes: UnsafeRawBufferPointer, fileOffset: UInt64) throws -> CheckpointRecord {
        var reader = ByteReader(bytes, fileOffset: fileOffset, context: "checkpoint record")
        let txid = try reader.u64()
        let next = try reader.u32()
        let live = try reader.u64()
        // Every id must leave room for the next one: 2^32 − 1 is never a next tree id.
        guard next < UInt32.max else { throw reader.fail("next tree id \(next)") }
        let treeCount = try reader.count(try reader.u32(), "tree count")
        // Each entry is at least 24 bytes: bound the count by what is there before allocating.
        guard treeCount <= reader.remaining / 24 else { throw reader.fail("tree count \(treeCount) does not fit") }
        var trees: [TreeEntry] = []
        trees.reserveCapacity(treeCount)
        var names = Set<String>()
        var ids = Set<UInt32>()
        for _ in 0..<treeCount {
            let id = try reader.u32()
            let nameLength = try reader.count(try reader.u16(), "tree name length")
            let name = try reader.treeName(length: nameLength)
            let root = try reader.u64()
            let count = try reader.u64()
            let height = try reader.u8()
            guard Int(height) <= Format.maxTreeHeight, (root == 0) == (height == 0), id < next else {
                throw reader.fail("tree '\(name)' has root \(root), height \(height), id \(id) (next tree id \(next))")
            }
            // A count comes from the file and feeds arithmetic: bound it (an empty tree counts 0).
            guard count <= Format.maxEntryCount, root != 0 || count == 0 else {
                throw reader.fail("tree '\(name)' claims \(count) entries")
            }
            guard names.insert(name).inserted else { throw reader.fail("tree '\(name)' listed twice") }
            guard ids.insert(id).inserted else { throw reader.fail("tree id \(id) listed twice") }
            trees.append(TreeEntry(id: id, name: name, rootOffset: root, count: count, height: height))
        }
        guard reader.isAtEnd else { throw reader.fail("\(reader.remaining) trailing bytes after \(treeCount) trees") }
        return CheckpointRecord(txid: txid, nextTreeID: next, liveBytes: live, trees: trees)
    }
}
