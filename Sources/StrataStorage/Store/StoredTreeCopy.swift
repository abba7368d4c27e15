/// Copies a tree into a compaction's or a backup's file page by page, as it is stored: each
/// leaf frame's payload unchanged (no decompression, no compression), each branch re-encoded
/// with its children's new offsets (FORMAT.md §10). Compaction otherwise rebuilds every tree
/// entry by entry, compressing every page again; a tree that no write changed since its pages
/// were written has nothing for the rebuild to reclaim (decision 81).
///
/// Only trees worth it are copied so (``isWorthCopying(root:count:file:)``): every page
/// written (the root is, so all are: a checkpoint writes children before parents, and a write
/// copies a written page before changing it), no overflow values (a leaf refers to them by
/// offset), and leaves three quarters full on average, so a tree left sparse by deletions is
/// still packed by the rebuild.
final class StoredTreeCopy {
    let file: PageFile
    let log: LogWriter
    let txid: UInt64
    /// Leaf frames copied so far.
    private(set) var leavesCopied = 0
    /// A stretch of the source file (``windowStart``, ``windowCount`` bytes read): leaves
    /// written one after another cost one read for many.
    var window: [UInt8]
    var windowStart: UInt64 = 0
    var windowCount = 0
    /// Where a copied frame's payload is decompressed to be checked.
    var decompressed: [UInt8]
    /// Where a branch's image is encoded.
    private var scratch: [UInt8]

    /// The most bytes a page frame occupies.
    let maxFrameLength: Int

    static let windowBytes = 256 << 10

    init(file: PageFile, log: LogWriter, txid: UInt64) {
        self.file = file
        self.log = log
        self.txid = txid
        maxFrameLength = Int(FrameHeader.frameLength(storedLength: max(file.pageSize, LZ4.compressBound(file.pageSize))))
        window = [UInt8](repeating: 0, count: StoredTreeCopy.windowBytes + maxFrameLength)
        decompressed = [UInt8](repeating: 0, count: file.pageSize)
        scratch = [UInt8](repeating: 0, count: file.pageSize)
    }

    /// Whether the tree under `root`, which its catalog says holds `count` entries, is copied
    /// as stored. Reads every page of the tree through the cache (each is checked against the
    /// parent cell that leads to it, as any descent checks it). A tree whose entries do not add
    /// up is left to the rebuild, which reports it.
    static func isWorthCopying(root: Page, count: UInt64, file: PageFile) throws -> Bool {
        guard root.diskAddress != 0 else { return false }
        var leaves = 0, used = 0
        var entries: UInt64 = 0
        func visit(_ page: Page) throws -> Bool {
            if page.isLeaf {
                for i in 0..<page.count where page.valueInfo(i).isOverflow { return false }
                leaves += 1
                used += page.usedBytes
                entries += UInt64(page.count)
                return true
            }
            for i in 0..<page.count where !(try visit(try file.child(of: page, at: i, readingAhead: true))) {
                return false
            }
            return true
        }
        guard try visit(root) else { return false }
        return entries == count && used * 4 >= leaves * file.pageSize * 3
    }

    /// Copies the tree under `root` (a tree ``isWorthCopying(root:count:file:)`` accepted),
    /// children before parents, and returns the new root's offset.
    func copy(root: Page) throws -> UInt64 {
        try copy(root, at: root.diskAddress)
    }

    private func copy(_ page: Page, at offset: UInt64) throws -> UInt64 {
        if page.isLeaf { return try copyStoredFrame(at: offset) }
        let copy = Page(copying: page, owner: 0)
        for i in 0..<page.count {
            let childOffset = page.childAddress(i)
            let moved = page.level == 1
                ? try copyStoredFrame(at: childOffset)
                : try self.copy(try file.child(of: page, at: i, readingAhead: true), at: childOffset)
            copy.setChildAddress(i, moved)
        }
        return try scratch.withUnsafeMutableBytes {
            try log.append(.page, txid: txid, payload: copy.encodeImage(into: $0), compress: true)
        }.offset
    }

    /// Appends the page frame at `offset` of the source file to the log with its stored
    /// payload, after checking the frame as any read checks it (both checksums, the lengths,
    /// and that its payload decompresses to its raw length).
    private func copyStoredFrame(at offset: UInt64) throws -> UInt64 {
        let frame = try checkedFrame(at: offset)
        leavesCopied += 1
        return try withStoredPayload(of: frame) { stored in
            try log.appendStored(.page, txid: txid, flags: frame.header.flags, stored: stored,
                                 rawLength: Int(frame.header.rawLength), payloadChecksum: frame.header.payloadChecksum)
        }.offset
    }
}
