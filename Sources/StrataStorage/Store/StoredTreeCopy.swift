/// Copies a tree into a compaction's or a backup's file page by page: each leaf a commit left
/// unchanged as its frame is stored (payload as it is, no decompression, no compression), each
/// leaf a commit changed as its image in memory (compressed ahead on a second thread), each
/// branch re-encoded with its children's new offsets (FORMAT.md §10). Compaction otherwise
/// rebuilds a tree entry by entry; a tree whose leaves are still full has nothing for the
/// rebuild to reclaim, and its entries cost more one at a time than its pages do (decisions
/// 81 and 85).
///
/// Only trees worth it are copied so (``isWorthCopying(root:count:file:)``): no overflow
/// values (a leaf refers to them by offset), and leaves three quarters full on average, so a
/// tree left sparse by deletions or by splits is still packed by the rebuild.
///
/// A page in memory is the one thing a copy without the writer gate (a backup) cannot trust
/// stored: pages are shared between versions, and a checkpoint gives a changed page of the
/// backup's snapshot its frame's offset whenever it runs, perhaps at an offset the window
/// read before the frame was there (decision 88). Such a copy writes every page in memory from
/// its image and reads from the file only the pages its snapshot reaches by offset, whose
/// frames were written before the snapshot was taken.
final class StoredTreeCopy {
    let file: PageFile
    let log: LogWriter
    let txid: UInt64
    /// Whether a page in memory that a checkpoint wrote is copied as its stored frame: only
    /// while the writer gate is held, so no checkpoint runs during the copy.
    let copiesWrittenPagesInMemory: Bool
    /// Leaf frames copied as stored so far.
    private(set) var leavesCopied = 0
    /// Compresses changed leaves while the next ones are encoded.
    private let compressor: PageCompressor
    /// Leaf frames ``isWorthCopying(root:count:)`` read and checked whole (decompressed and
    /// decoded): the copy checks their checksums again, not their decoding.
    private var checkedLeaves: Set<UInt64> = []
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

    /// A copier from `file` to `log`; `compressor` (of the file's page size, nothing pending)
    /// compresses changed leaves ahead. `holdsWriterGate`: the caller holds the writer gate for
    /// the whole copy (a compaction), so pages in memory that a checkpoint wrote keep their
    /// offsets and are copied as stored; otherwise (a backup) they are written from memory.
    init(file: PageFile, log: LogWriter, txid: UInt64, holdsWriterGate: Bool, compressor: PageCompressor? = nil) {
        self.file = file
        self.log = log
        self.txid = txid
        copiesWrittenPagesInMemory = holdsWriterGate
        self.compressor = compressor ?? PageCompressor(pageSize: file.pageSize)
        maxFrameLength = Int(FrameHeader.frameLength(storedLength: max(file.pageSize, LZ4.compressBound(file.pageSize))))
        window = [UInt8](repeating: 0, count: StoredTreeCopy.windowBytes + maxFrameLength)
        decompressed = [UInt8](repeating: 0, count: file.pageSize)
        scratch = [UInt8](repeating: 0, count: file.pageSize)
    }

    /// Whether the tree under `root`, which its catalog says holds `count` entries, is copied
    /// page by page. Reads every page of the tree: in memory, else a branch through the cache
    /// and a leaf from the file through the window (checked as any read checks it, and
    /// decoded, but not cached: the copy reads it again, and the file is about to be replaced).
    /// A tree whose entries do not add up is left to the rebuild, which reports it.
    func isWorthCopying(root: Page, count: UInt64) throws -> Bool {
        var leaves = 0, used = 0
        var entries: UInt64 = 0
        func measure(_ leaf: Page) -> Bool {
            for i in 0..<leaf.count where leaf.valueInfo(i).isOverflow { return false }
            leaves += 1
            used += leaf.usedBytes
            entries += UInt64(leaf.count)
            return true
        }
        func visit(_ page: Page) throws -> Bool {
            if page.isLeaf { return measure(page) }
            for i in 0..<page.count {
                let fits: Bool
                let storedLeaf = page.level == 1 && page.children[i] == nil
                if try storedLeaf && !isLeafDelta(at: page.childAddress(i)) {
                    let offset = page.childAddress(i)
                    fits = measure(try checkedLeaf(at: offset))
                    checkedLeaves.insert(offset)
                } else {
                    fits = try visit(try TreeRead.nextChild(page, i, file))
                }
                if !fits { return false }
            }
            return true
        }
        guard try visit(root) else { return false }
        return entries == count && used * 4 >= leaves * file.pageSize * 3
    }

    /// Copies the tree under `root` (a tree ``isWorthCopying(root:count:)`` accepted),
    /// children before parents, and returns the new root's offset.
    func copy(root: Page) throws -> UInt64 {
        if root.isLeaf {
            if let offset = storedOffset(ofResident: root) { return try copyStoredFrame(at: offset) }
            return try write(root)
        }
        if root.level == 1 {
            let copy = try copyLeaves(of: root, parent: nil, cell: 0)
            try appendAllLeaves()
            return copy.offset
        }
        return try copyBranch(root)
    }

    /// Copies the subtree under branch `page` (level 2 or above) and returns the offset of the
    /// branch's copy. Its level-1 children wait for their leaves (``WaitingBranch``) while the
    /// next ones are copied, so the compressor's batches span branches; all are written before
    /// this copy, which needs their offsets.
    private func copyBranch(_ page: Page) throws -> UInt64 {
        let copy = Page(copying: page, owner: 0)
        for i in 0..<page.count {
            let child = try TreeRead.nextChild(page, i, file)
            if child.level == 1 {
                try copyLeaves(of: child, parent: copy, cell: i)
            } else {
                copy.setChildAddress(i, try copyBranch(child))
            }
        }
        try appendAllLeaves()
        return try write(copy)
    }

    /// A level-1 branch's copy whose changed leaves are still in the compressor: written (and
    /// its offset put in its parent's cell `cell`) once none is.
    private final class WaitingBranch {
        let copy: Page
        let parent: Page?
        let cell: Int
        var pending = 0
        /// Where the copy was written (once it was).
        var offset: UInt64 = 0

        init(copy: Page, parent: Page?, cell: Int) {
            self.copy = copy
            self.parent = parent
            self.cell = cell
        }
    }

    /// Level-1 copies not yet written, in key order.
    private var waiting: [WaitingBranch] = []
    /// The cell of a waiting copy for each leaf in the compressor, in the order they went in.
    private var pendingLeaves: [(branch: WaitingBranch, cell: Int)] = []

    /// Copies the leaves under level-1 branch `page`: a written one as stored at once, a changed
    /// one through the compressor. Its copy (returned) waits until they are all appended.
    @discardableResult
    private func copyLeaves(of page: Page, parent: Page?, cell: Int) throws -> WaitingBranch {
        let branch = WaitingBranch(copy: Page(copying: page, owner: 0), parent: parent, cell: cell)
        waiting.append(branch)
        /// Leaf `i` written as its image, compressed ahead.
        func compressLeaf(_ leaf: Page, _ i: Int) throws {
            if compressor.fillingIsFull {
                try appendCompressedLeaves()
                compressor.submitFilling()
            }
            compressor.add { leaf.encodeImage(into: $0).count }
            pendingLeaves.append((branch, i))
            branch.pending += 1
        }
        for i in 0..<page.count {
            if let leaf = page.children[i], storedOffset(ofResident: leaf) == nil {
                // Changed since it was written (or written by a checkpoint this copy cannot
                // trust). A leaf a commit changed is in memory until a checkpoint writes it and
                // publishes its clean copy.
                try compressLeaf(leaf, i)
            } else if page.children[i] == nil, try isLeafDelta(at: page.childAddress(i)) {
                // Stored as a leaf delta (FORMAT.md §4): the copy holds no delta, so the leaf it
                // reads as is written as its image.
                try compressLeaf(try TreeRead.child(page, i, file), i)
            } else {
                // Written: its frame as stored, wherever the page itself is.
                let offset = page.children[i].flatMap(storedOffset(ofResident:)) ?? page.childAddress(i)
                branch.copy.setChildAddress(i, try copyStoredFrame(at: offset))
            }
        }
        try writeReadyBranches()
        return branch
    }

    /// The offset of the frame this copy may take `page` (a page in memory) from, or nil when
    /// it writes the page's image: a page no checkpoint wrote, a leaf stored as a delta, or any
    /// page in memory when the copy runs beside the writer (whose fields it then does not read).
    /// The address is read once: a checkpoint may be setting it.
    private func storedOffset(ofResident page: Page) -> UInt64? {
        guard copiesWrittenPagesInMemory, page.deltaBase.offset == 0 else { return nil }
        let offset = page.diskAddress
        return offset != 0 ? offset : nil
    }

    /// Appends the in-flight batch's leaves, points their cells at them, and writes the copies
    /// that no longer wait.
    private func appendCompressedLeaves() throws {
        let appended = try compressor.appendInFlight(to: log, txid: txid) { i, frame in
            let (branch, cell) = pendingLeaves[i]
            branch.copy.setChildAddress(cell, frame.offset)
            branch.pending -= 1
        }
        pendingLeaves.removeFirst(appended)
        try writeReadyBranches()
    }

    /// Appends every leaf in the compressor; every waiting copy is written after.
    private func appendAllLeaves() throws {
        try appendCompressedLeaves()
        if compressor.hasFilling {
            compressor.submitFilling()
            try appendCompressedLeaves()
        }
        precondition(waiting.isEmpty && pendingLeaves.isEmpty, "level-1 copies left waiting")
    }

    /// Writes the waiting copies, in order, up to the first that still waits for a leaf.
    private func writeReadyBranches() throws {
        var written = 0
        while written < waiting.count && waiting[written].pending == 0 {
            let branch = waiting[written]
            branch.offset = try write(branch.copy)
            branch.parent?.setChildAddress(branch.cell, branch.offset)
            written += 1
        }
        waiting.removeFirst(written)
    }

    /// Appends `page`'s image, compressed here.
    private func write(_ page: Page) throws -> UInt64 {
        try scratch.withUnsafeMutableBytes {
            try log.append(.page, txid: txid, payload: page.encodeImage(into: $0), compress: true)
        }.offset
    }

    /// Appends the page frame at `offset` of the source file to the log with its stored
    /// payload, after checking the frame as any read checks it (both checksums, the lengths,
    /// and that its payload decompresses to its raw length; the decompression not again for a
    /// frame checked whole before).
    private func copyStoredFrame(at offset: UInt64) throws -> UInt64 {
        let frame = try checkedFrame(at: offset, decompressing: !checkedLeaves.contains(offset))
        leavesCopied += 1
        return try withStoredPayload(of: frame) { stored in
            try log.appendStored(.page, txid: txid, flags: frame.header.flags, stored: stored,
                                 rawLength: Int(frame.header.rawLength), payloadChecksum: frame.header.payloadChecksum)
        }.offset
    }
}
