/// Builds a tree bottom-up from entries in ascending key order, writing packed pages to a log
/// (compaction, backup). Every page but the last of each level is filled as far as it goes.
///
/// Exclusivity: the stored properties marked `@exclusivity(unchecked)` run on every key (a
/// dynamic check is a `swift_beginAccess` call on every access; decision 29). None of them is
/// ever passed `inout` or borrowed across a call that touches it again; the whole suite passes
/// with the checks on (build without the attributes to recheck).
final class TreeBuilder {
    private let log: LogWriter
    private let pageSize: Int
    private let txid: UInt64
    /// The open (unwritten) page of each level, leaves first.
    @exclusivity(unchecked) private var open: [Page] = []
    /// Whether a page of this level has been written (so the level above exists).
    @exclusivity(unchecked) private var flushed: [Bool] = []
    /// The smallest key under the open page of each level (a branch's cell 0 key is empty, so
    /// it cannot be read back from the page).
    @exclusivity(unchecked) private var lowKeys: [[UInt8]] = []
    /// Where each page image is encoded before it is appended to the log.
    private var scratch: [UInt8]
    @exclusivity(unchecked) private(set) var count: UInt64 = 0
    /// Bytes of the frames written (pages and overflow values).
    @exclusivity(unchecked) private(set) var bytesWritten: UInt64 = 0

    /// Compresses leaf images while the next ones are built; shared by the trees of one file.
    private let compressor: PageCompressor
    /// The low keys of the leaves handed to `compressor` and not yet appended, in order.
    @exclusivity(unchecked) private var pendingLowKeys: [[UInt8]] = []

    /// A builder appending to `log`; `compressor` (of `pageSize` pages, none in flight) compresses
    /// its leaves ahead of the appends.
    init(log: LogWriter, pageSize: Int, txid: UInt64, compressor: PageCompressor? = nil) {
        self.log = log
        self.pageSize = pageSize
        self.txid = txid
        scratch = [UInt8](repeating: 0, count: pageSize)
        let compressor = compressor ?? PageCompressor(pageSize: pageSize)
        precondition(compressor.pageSize == pageSize && !compressor.hasInFlight && !compressor.hasFilling,
                     "a compressor of \(compressor.pageSize)-byte pages with nothing pending")
        self.compressor = compressor
    }

    private func page(at level: Int) -> Page {
        while open.count <= level {
            open.append(Page(pageSize: pageSize, kind: open.isEmpty ? Format.pageKindLeaf : Format.pageKindBranch,
                             level: open.count, owner: 0))
            flushed.append(false)
            lowKeys.append([])
        }
        return open[level]
    }

    /// Adds one entry; keys must ascend strictly. `value` is the inline value, or `overflow`
    /// the value to write as an overflow frame.
    func add(key: UnsafeRawBufferPointer, inlineValue: UnsafeRawBufferPointer?, overflow: [UInt8]?) throws {
        var leaf = page(at: 0)
        let valueLength = inlineValue?.count ?? Format.overflowReferenceLength
        let size = Format.leafCellHeader + key.count + valueLength
        if leaf.contiguousFree < size + 2 {
            try flush(level: 0)
            leaf = page(at: 0)
        }
        if leaf.count == 0 { lowKeys[0] = [UInt8](key) }
        if let overflow {
            // The leaves before this one go into the file before its overflow frame, as they
            // would one page at a time.
            try appendPendingLeaves()
            let frame = try overflow.withUnsafeBytes {
                try log.append(.overflow, txid: txid, payload: $0, compress: true)
            }
            bytesWritten += frame.length
            var reference = frame.offset.littleEndian
            _ = withUnsafeBytes(of: &reference) {
                leaf.insertLeafCell(at: leaf.count, key: key, value: $0, overflowLength: overflow.count)
            }
        } else {
            _ = leaf.insertLeafCell(at: leaf.count, key: key, value: inlineValue!, overflowLength: nil)
        }
        count += 1
    }

    /// Writes the open page of `level` and links it into the level above: a leaf through the
    /// compressor (appended and linked when its batch is), a branch at once.
    private func flush(level: Int) throws {
        if level == 0 {
            let leaf = open[0]
            compressor.add { leaf.encodeImage(into: $0).count }
            pendingLowKeys.append(lowKeys[0])
            flushed[0] = true
            open[0] = Page(pageSize: pageSize, kind: Format.pageKindLeaf, level: 0, owner: 0)
            if compressor.fillingIsFull {
                try appendInFlightLeaves()
                compressor.submitFilling()
            }
            return
        }
        let firstKey = lowKeys[level]
        let frame = try write(open[level])
        bytesWritten += frame.length
        flushed[level] = true
        open[level] = Page(pageSize: pageSize, kind: Format.pageKindBranch, level: level, owner: 0)
        try link(level: level, firstKey: firstKey, offset: frame.offset)
    }

    /// Adds the page of `level` written at `offset`, whose smallest key is `firstKey`, to the
    /// open page of the level above (writing that one first when it is full).
    private func link(level: Int, firstKey: [UInt8], offset: UInt64) throws {
        var parent = page(at: level + 1)
        if !parent.canFit(Format.branchCellHeader + firstKey.count) {
            try flush(level: level + 1)
            parent = page(at: level + 1)
        }
        if parent.count == 0 { lowKeys[level + 1] = firstKey }
        let cellKey: [UInt8] = parent.count == 0 ? [] : firstKey
        _ = cellKey.withUnsafeBytes {
            parent.insertBranchCell(at: parent.count, key: $0, childAddress: offset, child: nil)
        }
    }

    /// Appends the in-flight batch's leaves (compressed by now) in order and links each.
    private func appendInFlightLeaves() throws {
        let appended = try compressor.appendInFlight(to: log, txid: txid) { i, frame in
            bytesWritten += frame.length
            try link(level: 0, firstKey: pendingLowKeys[i], offset: frame.offset)
        }
        pendingLowKeys.removeFirst(appended)
    }

    /// Appends and links every leaf handed to the compressor.
    private func appendPendingLeaves() throws {
        try appendInFlightLeaves()
        if compressor.hasFilling {
            compressor.submitFilling()
            try appendInFlightLeaves()
        }
    }

    /// Appends `page`'s image to the log as a page frame.
    private func write(_ page: Page) throws -> (offset: UInt64, length: UInt64) {
        try scratch.withUnsafeMutableBytes {
            try log.append(.page, txid: txid, payload: page.encodeImage(into: $0), compress: true)
        }
    }

    /// Writes what is left and returns the root's frame offset and the tree height (0, 0 for
    /// an empty tree).
    func finish() throws -> (rootOffset: UInt64, height: Int) {
        guard count > 0 else { return (0, 0) }
        var level = 0
        while true {
            let page = open[level]
            if !flushed[level] {
                // The only page of the top level: the root.
                let frame = try write(page)
                bytesWritten += frame.length
                return (frame.offset, level + 1)
            }
            if page.count > 0 { try flush(level: level) }
            // The level above is complete only once every leaf is linked into it.
            if level == 0 { try appendPendingLeaves() }
            level += 1
        }
    }
}
