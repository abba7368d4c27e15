/// One tree as a write transaction changes it: copy-on-write from the committed root.
///
/// A page is changed in place only when this transaction owns it (`page.owner == txid`);
/// otherwise it is copied first and the copy linked into its (owned) parent. Pages of
/// committed versions are never modified, which is what lets snapshots read without locks.
///
/// Exclusivity: the stored properties marked `@exclusivity(unchecked)` run on every key (a
/// dynamic check is a `swift_beginAccess` call on every access; decision 29). None of them is
/// ever passed `inout` or borrowed across a call that touches it again; the whole suite passes
/// with the checks on (build without the attributes to recheck).
final class MutableTree {
    let id: UInt32
    let name: String
    @exclusivity(unchecked) var root: Page?
    @exclusivity(unchecked) var count: UInt64
    let txid: UInt64
    let file: PageFile
    /// Pages this transaction copied or created (the "pages touched" counter).
    @exclusivity(unchecked) var pagesTouched = 0
    /// Of those, the pages that were clean (written at a checkpoint) or new: what the
    /// transaction adds to the pages the next checkpoint writes. A copy of a page some earlier
    /// commit already copied replaces a dirty page and adds nothing.
    @exclusivity(unchecked) var pagesDirtied = 0
    /// Frame bytes of written pages this transaction copied, less those of copies it then
    /// retired (counted in ``freedFrameBytes``): garbage once the copies are written
    /// (``Store/replacedBytesSinceCheckpoint``).
    @exclusivity(unchecked) var replacedFrameBytes: Int64 = 0
    /// Frame bytes that became garbage (overflow values replaced, pages merged away).
    @exclusivity(unchecked) var freedFrameBytes: UInt64 = 0
    /// Overflow frames no longer referenced (offsets), for space accounting.
    @exclusivity(unchecked) var freedOverflow: [UInt64] = []
    /// Counts the operations that began to change the tree's content. An operation that throws
    /// with this unchanged changed nothing; cursors compare it with the value they were
    /// positioned at. (Copying a page into its owned parent on the way down is not a change:
    /// the copy holds the same entries.)
    @exclusivity(unchecked) private(set) var modifications: UInt64 = 0
    /// ``delete(_:)``'s path (child indexes, then the owned pages), kept empty between calls
    /// for their capacity: taken out at the start of a delete and put back at its end.
    @exclusivity(unchecked) private var deletePath: [Int] = []
    @exclusivity(unchecked) private var deletePages: [Page] = []

    /// Whether the copies this tree makes are held back from the page cache's budget as they
    /// are made (``PageCache/reserveInFlight(_:)``): a write transaction's trees do; recovery's
    /// do not (nothing else runs, and nothing would release the reservation).
    let reservesCache: Bool

    init(id: UInt32, name: String, root: Page?, count: UInt64, txid: UInt64, file: PageFile,
         reservesCache: Bool = false) {
        self.id = id
        self.name = name
        self.root = root
        self.count = count
        self.txid = txid
        self.file = file
        self.reservesCache = reservesCache
    }

    /// Pages copied between two in-flight reservations: 1 MiB of 4 KiB pages.
    private static let reservationStep = 256

    var pageSize: Int { file.pageSize }

    /// The largest cell kept inline in a leaf; larger values go to overflow frames.
    var inlineCellLimit: Int { pageSize / 4 }

    // MARK: Ownership

    private func own(_ page: Page) -> Page {
        if page.owner == txid { return page }
        countCopy(of: page)
        return Page(copying: page, owner: txid)
    }

    /// Counts a copy of `page` (not owned by this transaction): touched, and, when the page
    /// was written, dirtied and its frame garbage-to-be.
    @inline(__always) private func countCopy(of page: Page) {
        touch()
        if page.diskAddress != 0 {
            pagesDirtied += 1
            replacedFrameBytes += Int64(page.diskLength)
        }
    }

    private func ownedChild(_ parent: Page, _ i: Int) throws -> Page {
        let child = try TreeRead.child(parent, i, file)
        if child.owner == txid { return child }
        countCopy(of: child)
        let copy = Page(copying: child, owner: txid)
        parent.children[i] = copy
        parent.setChildAddress(i, 0)
        return copy
    }

    @inline(__always) private func touch() {
        pagesTouched += 1
        if reservesCache && pagesTouched % Self.reservationStep == 0 {
            file.cache.reserveInFlight(Self.reservationStep * pageSize)
        }
    }

    private func newPage(leaf: Bool, level: Int) -> Page {
        touch()
        pagesDirtied += 1
        return Page(pageSize: pageSize, kind: leaf ? Format.pageKindLeaf : Format.pageKindBranch, level: level,
                    owner: txid)
    }

    private func retire(_ page: Page) {
        if page.diskAddress != 0 {
            freedFrameBytes += page.diskLength
        } else {
            freedFrameBytes += page.replacedFrame.length
            replacedFrameBytes -= Int64(page.replacedFrame.length)
        }
    }

    // MARK: Replace along a cursor's path

    /// Replaces the value of the entry at the end of `path` (a cursor's descent, made while the
    /// tree held what it holds now) with the inline `value`, when its leaf has room: no search,
    /// the pages on the path made this transaction's as a put's descent makes them (copied into
    /// their owned parents), and `path` naming them afterwards. False, with no entry changed,
    /// when the path does not start at the root, the entry's value is an overflow reference, or
    /// the leaf has no room for the value where the cell is (a put moves cells or splits).
    func replaceValue(along path: inout [(page: Page, index: Int)], value: UnsafeRawBufferPointer) throws -> Bool {
        guard let current = root, let top = path.first, top.page === current else { return false }
        var page = current
        if page.owner != txid {
            page = own(current)
            root = page
            path[0].page = page
        }
        for level in 1..<path.count {
            let child = path[level].page
            // Already this transaction's, and still its parent's child: nothing to copy.
            if child.owner == txid, page.children.indices.contains(path[level - 1].index),
               page.children[path[level - 1].index] === child {
                page = child
                continue
            }
            page = try ownedChild(page, path[level - 1].index)
            path[level].page = page
        }
        let index = path[path.count - 1].index
        guard page.isLeaf, index < page.count, !page.valueInfo(index).isOverflow,
              page.replaceLeafValue(at: index, value: value) else { return false }
        page.noteChanged(page.key(index))
        modifications &+= 1
        return true
    }

    // MARK: Put

    /// The empty key of a branch's cell 0.
    private static var noKey: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    private struct Split {
        var separator: [UInt8]
        var right: Page
    }

    /// Inserts or replaces. `value` is the inline bytes, or the 8-byte overflow reference when
    /// `overflowLength` is set. Returns the overflow frame the old value used, if any.
    @discardableResult
    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer,
             overflowLength: Int?) throws -> UInt64? {
        guard let current = root else {
            modifications &+= 1
            let leaf = newPage(leaf: true, level: 0)
            _ = leaf.insertLeafCell(at: 0, key: key, value: value, overflowLength: overflowLength)
            root = leaf
            count = 1
            return nil
        }
        let ownedRoot = own(current)
        var replaced: UInt64?
        if let split = try insert(into: ownedRoot, key, value, overflowLength, rightmost: true, replaced: &replaced) {
            let top = newPage(leaf: false, level: ownedRoot.level + 1)
            _ = top.insertBranchCell(at: 0, key: MutableTree.noKey, childAddress: 0, child: ownedRoot)
            split.separator.withUnsafeBytes {
                _ = top.insertBranchCell(at: 1, key: $0, childAddress: 0, child: split.right)
            }
            root = top
        } else {
            root = ownedRoot
        }
        return replaced
    }

    private func insert(into page: Page, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer,
                        _ overflowLength: Int?, rightmost: Bool, replaced: inout UInt64?) throws -> Split? {
        if page.isLeaf {
            // Below here nothing reads a page, so nothing can fail part way.
            modifications &+= 1
            page.noteChanged(key)
            let (i, found) = page.lowerBound(key)
            if found {
                if page.valueInfo(i).isOverflow { replaced = page.overflowAddress(i) }
                if page.replaceLeafCell(at: i, key: key, value: value, overflowLength: overflowLength) { return nil }
                page.removeCell(at: i)
            } else {
                count += 1
            }
            if page.insertLeafCell(at: i, key: key, value: value, overflowLength: overflowLength) { return nil }
            let cell = Page.PendingCell(leafKey: key, value: value, overflowLength: overflowLength)
            return split(page, inserting: cell, child: nil, at: i, appendOnly: rightmost && i == page.count)
        }
        let childIndex = page.childIndex(for: key)
        let child = try ownedChild(page, childIndex)
        let rightmostChild = rightmost && childIndex == page.count - 1
        guard let childSplit = try insert(into: child, key, value, overflowLength, rightmost: rightmostChild,
                                          replaced: &replaced) else {
            return nil
        }
        return childSplit.separator.withUnsafeBytes { separator -> Split? in
            let right = childSplit.right
            if page.insertBranchCell(at: childIndex + 1, key: separator, childAddress: 0, child: right) { return nil }
            let cell = Page.PendingCell(branchKey: separator, childAddress: 0)
            return split(page, inserting: cell, child: right, at: childIndex + 1,
                         appendOnly: rightmost && childIndex + 1 == page.count)
        }
    }

    /// Splits a full page while inserting one more cell, `newCell`, at `index`. The page keeps
    /// the left part; the returned right page gets the rest. When appending at the right edge
    /// of the tree the new cell goes alone into the right page, so sorted loads fill pages fully.
    private func split(_ page: Page, inserting newCell: Page.PendingCell, child newChild: Page?,
                       at index: Int, appendOnly: Bool) -> Split {
        let n = page.count
        let newSize = newCell.size
        @inline(__always) func cellSize(_ j: Int) -> Int {
            j == index ? newSize : page.cellSize(at: page.slot(j < index ? j : j - 1))
        }
        // Cells 0..<splitAt stay left; splitAt...n go right.
        var splitAt = n
        if !appendOnly {
            var total = 0
            for j in 0...n { total += cellSize(j) + 2 }
            var acc = 0
            splitAt = 1
            for j in 0...n {
                acc += cellSize(j) + 2
                if acc * 2 >= total {
                    splitAt = max(1, min(j + (acc * 2 - total > cellSize(j) ? 0 : 1), n))
                    break
                }
            }
        }
        let leaf = page.isLeaf
        let left = Page(pageSize: pageSize, kind: leaf ? Format.pageKindLeaf : Format.pageKindBranch,
                        level: page.level, owner: txid)
        let right = newPage(leaf: leaf, level: page.level)
        var separator: [UInt8] = []
        for j in 0...n {
            let target = j < splitAt ? left : right
            if j == index {
                if !leaf && j == splitAt {
                    separator = [UInt8](newCell.key)
                    right.appendBranchCell(key: MutableTree.noKey, childAddress: 0, child: newChild)
                } else {
                    target.appendCell(newCell)
                    if !leaf { target.children.append(newChild) }
                }
            } else {
                let source = j < index ? j : j - 1
                if !leaf && j == splitAt {
                    separator = [UInt8](page.key(source))
                    right.appendBranchCell(key: MutableTree.noKey, childAddress: page.childAddress(source),
                                           child: page.children[source])
                } else {
                    target.appendCell(from: page, at: source)
                }
            }
        }
        if leaf { separator = [UInt8](right.key(0)) }
        page.assign(from: left)
        // Half its cells moved out: no longer a few cells changed since its origin.
        page.forgetOrigin()
        return Split(separator: separator, right: right)
    }

    // MARK: Delete

    /// Removes `key`. Returns whether it existed and the overflow frame its value used.
    func delete(_ key: UnsafeRawBufferPointer) throws -> (found: Bool, overflow: UInt64?) {
        guard let current = root, key.baseAddress != nil else { return (false, nil) }
        // Look first, recording the path, so that deleting a missing key copies no pages and
        // the copy-on-write pass below needs no second search. The path's two arrays are the
        // tree's, kept between deletes (a batch of deletes allocated two arrays each), and
        // emptied on the way out so that no page outlives the call in them.
        var indices = deletePath
        var owned = deletePages
        deletePath = []
        deletePages = []
        defer {
            // Element by element: `removeAll(keepingCapacity:)` goes through the array's general
            // range replacement, which cost more than a delete's search of a cached leaf.
            while !indices.isEmpty { indices.removeLast() }
            while !owned.isEmpty { owned.removeLast() }
            deletePath = indices
            deletePages = owned
        }
        var page = current
        while !page.isLeaf {
            let childIndex = page.childIndex(for: key)
            indices.append(childIndex)
            page = try TreeRead.child(page, childIndex, file)
        }
        let (i, found) = page.lowerBound(key)
        guard found else { return (false, nil) }
        let oldOverflow = page.valueInfo(i).isOverflow ? page.overflowAddress(i) : nil
        let ownedRoot = own(current)
        owned.append(ownedRoot)
        for childIndex in indices { owned.append(try ownedChild(owned[owned.count - 1], childIndex)) }
        // From here a failed page read (a merge, the root collapse) leaves the tree changed:
        // the caller fails the transaction.
        modifications &+= 1
        let leaf = owned[owned.count - 1]
        leaf.noteChanged(key)
        leaf.removeCell(at: i)
        // Upwards: an emptied page leaves its parent (always possible: it only frees room); one
        // under a quarter full merges with a neighbour when both fit. Removing, not merging, is
        // what keeps a branch left with one child (its neighbour too full to merge, which long
        // keys make possible) from holding an empty page once that child empties.
        var level = indices.count - 1
        while level >= 0 {
            let child = owned[level + 1]
            if child.count == 0 {
                removeChild(of: owned[level], at: indices[level])
                retire(child)
            } else if child.usedBytes < pageSize / 4 {
                try merge(owned[level], around: indices[level])
            } else {
                break
            }
            level -= 1
        }
        // The count started from the file: one that runs below zero was forged or damaged.
        guard count > 0 else {
            throw StrataError.corrupt("tree '\(name)' has more entries than its count", offset: nil)
        }
        count -= 1
        var top = ownedRoot
        while !top.isLeaf && top.count == 1 {
            let only = try TreeRead.child(top, 0, file)
            retire(top)
            top = only
        }
        if top.count == 0 {
            retire(top)
            root = nil
        } else {
            root = top
        }
        return (true, oldOverflow)
    }

    /// Removes cell `index` of the branch `parent`. When that is cell 0, the next cell becomes
    /// cell 0 and loses its key (FORMAT.md: cell 0 has none; the parent's own bound covers it).
    private func removeChild(of parent: Page, at index: Int) {
        guard index == 0 && parent.count > 1 else {
            parent.removeCell(at: index)
            return
        }
        let address = parent.childAddress(1)
        let next = parent.children[1]
        parent.removeCell(at: 1)
        parent.removeCell(at: 0)
        // Cannot fail: the two cells removed were larger than the one put back.
        _ = parent.insertBranchCell(at: 0, key: MutableTree.noKey, childAddress: address, child: next)
    }

    /// Merges child `childIndex` of `parent` with a neighbour when both fit in one page.
    private func merge(_ parent: Page, around childIndex: Int) throws {
        guard parent.count > 1 else { return }
        let leftIndex = childIndex > 0 ? childIndex - 1 : childIndex
        let rightIndex = leftIndex + 1
        let leftChild = try TreeRead.child(parent, leftIndex, file)
        let rightChild = try TreeRead.child(parent, rightIndex, file)
        let separatorCost = leftChild.isLeaf ? 0 : parent.key(rightIndex).count
        guard leftChild.usedBytes + rightChild.usedBytes - Format.pageHeaderLength + separatorCost <= pageSize else {
            return
        }
        let left = try ownedChild(parent, leftIndex)
        let right = try TreeRead.child(parent, rightIndex, file)
        if left.contiguousFree < right.usedBytes - Format.pageHeaderLength + separatorCost { left.compact() }
        for j in 0..<right.count {
            if !right.isLeaf && j == 0 {
                left.appendBranchCell(key: parent.key(rightIndex), childAddress: right.childAddress(0),
                                      child: right.children[0])
            } else {
                left.appendCell(from: right, at: j)
            }
        }
        retire(right)
        // The neighbour's cells moved in: no longer a few cells changed since its origin.
        left.forgetOrigin()
        parent.removeCell(at: rightIndex)
    }

    // MARK: Replay helpers

    /// Drops every page (the tree is being deleted) and accounts their frames as garbage.
    /// Reads every page first and changes nothing until all were read, so a failed read leaves
    /// the tree and its accounting as they were.
    func dropAll() throws {
        guard let rootPage = root else { return }
        var freedBytes: UInt64 = 0
        var overflow: [UInt64] = []
        try visit(rootPage) { page in
            freedBytes += page.diskAddress != 0 ? page.diskLength : page.replacedFrame.length
            if page.isLeaf {
                for i in 0..<page.count where page.valueInfo(i).isOverflow {
                    overflow.append(page.overflowAddress(i))
                }
            }
        }
        modifications &+= 1
        freedFrameBytes += freedBytes
        freedOverflow += overflow
        root = nil
        count = 0
    }

    private func visit(_ page: Page, _ body: (Page) -> Void) throws {
        body(page)
        if !page.isLeaf {
            for i in 0..<page.count { try visit(try TreeRead.child(page, i, file), body) }
        }
    }
}
