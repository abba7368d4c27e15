/// Walks one tree of a transaction in key order, forwards or backwards.
///
/// A cursor starts unpositioned; `first()`, `last()` or `seek(_:)` position it, `next()` and
/// `previous()` move it, and each returns whether the cursor now rests on an entry
/// (``isValid``).
///
/// **Borrowed bytes.** ``key`` and ``value`` borrow memory the cursor keeps alive (the page, or
/// for an overflow value a buffer the cursor owns): they are valid until the cursor next moves
/// or is released, and must not be kept longer (bbolt's rule). An overflow value is read when
/// the cursor lands on its entry, so a failed read is thrown by the move, never hidden.
///
/// **Lifetime.** A cursor never outlives what it reads: it holds its pages and its transaction.
/// Once that transaction ended (committed, rolled back, failed, or the snapshot closed), every
/// throwing method throws ``StrataError/transactionEnded(_:)`` (or
/// ``StrataError/transactionFailed(cause:)``), ``isValid`` is `false`, and the non-throwing
/// accessors ``key``, ``value`` and ``copyKey()`` return empty bytes (keys are never empty, so
/// an empty key means "no entry"). The same holds for a cursor of a write transaction whose
/// tree was changed since it was positioned, except that its moves throw
/// ``StrataError/cursorInvalidated`` and `first()`, `last()` and `seek(_:)` position it afresh.
/// None of these reads memory that was freed or changed.
///
/// **Order.** Keys must strictly ascend along the walk. Each page checks its own keys when it is
/// read from the file; the cursor checks each leaf it enters against the one it left, so a
/// damaged tree whose leaves overlap or repeat throws ``StrataError/corrupt(_:offset:)`` instead of
/// walking backwards or in a loop.
///
/// Exclusivity: the stored properties marked `@exclusivity(unchecked)` run on every key (a
/// dynamic check is a `swift_beginAccess` call on every access; decision 29). None of them is
/// ever passed `inout` or borrowed across a call that touches it again; the whole suite passes
/// with the checks on (build without the attributes to recheck).
public final class Cursor {
    /// The root for a snapshot's cursor (a snapshot's tree never changes).
    private let fixedRoot: Page?
    /// The tree for a write transaction's cursor: its root is read at each positioning.
    private let writeTree: MutableTree?
    private let file: PageFile
    private let lifetime: HandleLifetime
    /// Keeps the transaction (and so, for a snapshot, its registration) alive.
    private let owner: AnyObject
    /// The descent from the root: a page and the index chosen in it, leaf last.
    @exclusivity(unchecked) private var path: [(page: Page, index: Int)] = []
    /// Whether the last move left the cursor on an entry.
    @exclusivity(unchecked) private var positioned = false
    /// The rest of the leaf was handed out (``restOfLeaf()``): the cursor's path ends on the
    /// leaf's last entry but it rests on no entry until it moves (that entry is never landed
    /// on, so an overflow value there is not read).
    @exclusivity(unchecked) private var leafTaken = false
    /// `writeTree.modifications` when the cursor was positioned.
    @exclusivity(unchecked) private var stamp: UInt64 = 0
    /// The current overflow value, read on landing. Allocated on the first overflow value, so
    /// that a cursor costs no buffer otherwise. Raw memory the cursor owns: touched only in
    /// `Cursor+Unsafe.swift`.
    @exclusivity(unchecked) var overflowBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// Bytes of ``overflowBuffer`` the current overflow value fills.
    @exclusivity(unchecked) var overflowCount = 0
    /// The frame `overflowBuffer` holds (0: none; frames start after the header).
    @exclusivity(unchecked) private var overflowAddress: UInt64 = 0

    /// A snapshot's cursor.
    init(root: Page?, file: PageFile, lifetime: HandleLifetime, owner: AnyObject) {
        self.fixedRoot = root
        self.writeTree = nil
        self.file = file
        self.lifetime = lifetime
        self.owner = owner
        // Room for any real tree's height, so a descent never grows the array.
        path.reserveCapacity(8)
    }

    /// A write transaction's cursor.
    init(writeTree: MutableTree, lifetime: HandleLifetime, owner: AnyObject) {
        self.fixedRoot = nil
        self.writeTree = writeTree
        self.file = writeTree.file
        self.lifetime = lifetime
        self.owner = owner
        path.reserveCapacity(8)
    }

    deinit { deallocateOverflowBuffer() }

    /// Whether the cursor rests on an entry whose ``key`` and ``value`` may be read: it was
    /// positioned on one, its transaction is still active and (write transactions) its tree has
    /// not changed since.
    public var isValid: Bool {
        guard positioned, !leafTaken, lifetime.isActive else { return false }
        if let writeTree, writeTree.modifications != stamp { return false }
        return true
    }

    @inline(__always) private static var noBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// Where `page` was read from, for an error about it: `nil` for a page held in memory.
    private static func fileOffset(of page: Page) -> UInt64? { page.diskAddress == 0 ? nil : page.diskAddress }

    /// The current key, borrowed until the cursor moves; empty when ``isValid`` is `false`.
    ///
    /// A buffer pointer, not a `RawSpan`: a property can lend a span only with a lifetime
    /// annotation, which is still an experimental feature (decision 59). Copy what must outlive
    /// the position (``copyKey()``).
    public var key: UnsafeRawBufferPointer {
        guard isValid else { return Cursor.noBytes }
        let top = path[path.count - 1]
        return top.page.key(top.index)
    }

    /// The current value, borrowed until the cursor moves; empty when ``isValid`` is `false`.
    /// An overflow value (larger than a quarter page) was read from its frame when the cursor
    /// landed on the entry, into a buffer the cursor owns.
    public var value: UnsafeRawBufferPointer {
        guard isValid else { return Cursor.noBytes }
        let top = path[path.count - 1]
        if top.page.valueInfo(top.index).isOverflow { return overflowValue }
        return top.page.valueBytes(top.index)
    }

    /// Whether the current value lives in an overflow frame; `false` when ``isValid`` is `false`.
    public var isOverflow: Bool {
        guard isValid else { return false }
        let top = path[path.count - 1]
        return top.page.valueInfo(top.index).isOverflow
    }

    /// The current value, copied. Throws ``StrataError/invalidArgument(_:)`` when the cursor is
    /// not on an entry, and the lifetime errors above.
    public func copyValue() throws -> [UInt8] {
        try lifetime.check()
        try checkUnchanged()
        guard positioned, !leafTaken else {
            throw StrataError.invalidArgument("Cursor.copyValue() called while the cursor is not on an entry")
        }
        let copy = [UInt8](value)
        // A close between the check above and the copy makes `value` empty: throw the close
        // rather than return an empty value (snapshotClosedWhileInUse saw it, 1 run in 5).
        try lifetime.check()
        return copy
    }

    /// The current key, copied; empty when ``isValid`` is `false`.
    public func copyKey() -> [UInt8] { [UInt8](key) }

    /// Moves to the smallest key.
    @discardableResult
    public func first() throws -> Bool {
        guard let root = try restart() else { return false }
        try descend(from: root, toFirst: true)
        if path[path.count - 1].page.count > 0 { return try land() }
        return try advanceLeaf()
    }

    /// Moves to the largest key.
    @discardableResult
    public func last() throws -> Bool {
        guard let root = try restart() else { return false }
        try descend(from: root, toFirst: false)
        if path[path.count - 1].page.count > 0 { return try land() }
        return try retreatLeaf()
    }

    /// Moves to the first key ≥ `key` (or past the end if there is none).
    @discardableResult
    public func seek(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try seek($0) }
    }

    /// Moves to the first key ≥ `key` (or past the end if there is none); returns whether the cursor
    /// rests on an entry. `key` is read only during the call.
    @discardableResult
    public func seek(_ key: RawSpan) throws -> Bool {
        try key.withUnsafeBytes { try seek($0) }
    }

    /// The pointer form of ``seek(_:)-(RawSpan)`` for the layers of this package (decision 59).
    @discardableResult
    package func seek(_ key: UnsafeRawBufferPointer) throws -> Bool {
        if try seekWithinLeaf(key) { return true }
        // The descent writes the path's levels over the last one's, then cuts it to its own
        // depth: a level on the page it held already (the root, every time) keeps its
        // reference, and no level is removed and appended again.
        guard var page = try restart(keepingPath: true) else {
            truncatePath(to: 0)
            return false
        }
        var depth = 0
        while !page.isLeaf {
            let childIndex = page.childIndex(for: key)
            setLevel(depth, page, childIndex)
            depth += 1
            page = try TreeRead.child(page, childIndex, file)
        }
        let index = page.lowerBound(key).index
        setLevel(depth, page, index)
        truncatePath(to: depth + 1)
        if index < page.count { return try land() }
        return try advanceLeaf()
    }

    /// Sets the path's level `depth` (at most one past its end) to `index` in `page`.
    @inline(__always)
    private func setLevel(_ depth: Int, _ page: Page, _ index: Int) {
        guard depth < path.count else {
            path.append((page, index))
            return
        }
        if path[depth].page !== page { path[depth].page = page }
        path[depth].index = index
    }

    /// Moves to the last key ≤ `key`.
    @discardableResult
    public func seekBackward(_ key: [UInt8]) throws -> Bool {
        guard try seek(key) else { return try last() }
        let equal = key.withUnsafeBytes { compareKeys(self.key, $0) == 0 }
        if equal { return true }
        return try previous()
    }

    /// Moves to the next key; `false` (and not valid) past the last.
    @discardableResult
    public func next() throws -> Bool {
        try lifetime.check()
        guard positioned else { return false }
        try checkUnchanged()
        let top = path.count - 1
        let index = path[top].index + 1
        path[top].index = index
        if index < path[top].page.count { return try land() }
        return try advanceLeaf()
    }

    /// Moves to the previous key; `false` (and not valid) before the first.
    @discardableResult
    public func previous() throws -> Bool {
        try lifetime.check()
        guard positioned else { return false }
        try checkUnchanged()
        // After the rest of a leaf was taken, the entry before the cursor is the leaf's last.
        if leafTaken { return try land() }
        let top = path.count - 1
        let index = path[top].index
        if index > 0 {
            path[top].index = index - 1
            return try land()
        }
        return try retreatLeaf()
    }

    /// A snapshot cursor's seek to a key within the leaf it rests on, found in that leaf alone
    /// (no descent): in a B+tree every key between a leaf's first and last lies in that leaf if
    /// it is stored at all, and a snapshot's leaf never changes. Point reads in key order (the
    /// rows of a relationship's members, a batch of faults) mostly land in the leaf the last one
    /// did, often on the entry right after the current one, which is checked first: SQLite's
    /// table seek checks its current leaf and next entry the same way. False when the key is
    /// outside the leaf (or the cursor is not resting on one): the caller descends.
    @inline(__always)
    private func seekWithinLeaf(_ wanted: UnsafeRawBufferPointer) throws -> Bool {
        guard positioned, let top = path.last else { return false }
        // A write transaction's leaf is the tree's as long as nothing changed the tree.
        if let writeTree, writeTree.modifications != stamp { return false }
        let leaf = top.page
        let count = leaf.count
        // The entry after the current one: reads in key order of consecutive keys (a list's
        // members inserted together) need no search at all.
        let after = top.index + 1
        if after < count, leaf.isLeaf, compareKeys(leaf.key(after), wanted) == 0 {
            try lifetime.check()
            path[path.count - 1].index = after
            return try land()
        }
        guard count > 0, leaf.isLeaf, compareKeys(leaf.key(0), wanted) <= 0,
              compareKeys(wanted, leaf.key(count - 1)) <= 0 else {
            return false
        }
        try lifetime.check()
        path[path.count - 1].index = leaf.lowerBound(wanted).index
        return try land()
    }

    // MARK: A leaf at a time

    /// The entries from the one the cursor rests on to the end of its leaf, read by position
    /// (``LeafEntries``). The cursor then rests after them, on no entry (``isValid`` is
    /// `false`) until it moves: ``next()`` goes on with the first entry of the next leaf,
    /// ``previous()`` lands on the leaf's last entry, a seek positions it as usual. No value is
    /// read here: an overflow value among the entries is read by ``LeafEntries/value(_:)``.
    /// Empty when the cursor is not on an entry.
    ///
    /// - Throws: the lifetime errors of ``next()`` (an ended transaction, a changed tree).
    package func restOfLeaf() throws -> LeafEntries {
        try lifetime.check()
        try checkUnchanged()
        guard positioned, !leafTaken else { return LeafEntries() }
        let top = path[path.count - 1]
        let entries = LeafEntries(page: top.page, from: top.index, file: file, writeTree: writeTree, stamp: stamp)
        path[path.count - 1].index = top.page.count - 1
        leafTaken = true
        return entries
    }

    /// The entries from the first key ≥ `key` to the end of the leaf that holds (or would hold)
    /// `key`, found by a descent that records no path: for a point read or a short range, which
    /// mostly ends in that leaf, the path's upkeep (a reference per level written, the levels
    /// cut) is most of a seek's cost beyond its searches (decision 99). The cursor then rests on
    /// no entry and its path is kept as it was, so a later seek still finds its root level in
    /// place; a caller whose range goes on past the leaf seeks after the leaf's last key.
    /// Empty for an empty tree, and when `key` is above every key of its leaf (the next leaf's
    /// first key, if any, is then the first ≥ `key`: a seek finds it).
    ///
    /// - Throws: the lifetime errors of ``seek(_:)``; a page that cannot be read.
    package func leafEntries(from key: UnsafeRawBufferPointer) throws -> LeafEntries {
        guard let root = try restart(keepingPath: true) else { return LeafEntries() }
        let (leaf, index, _) = try TreeRead.find(root, key, file)
        return LeafEntries(page: leaf, from: index, file: file, writeTree: writeTree, stamp: stamp)
    }

    // MARK: Writing in place

    /// Whether this is a cursor of `tree` in its write transaction.
    func walks(_ tree: MutableTree) -> Bool { writeTree === tree }

    /// Replaces the value of the entry the cursor rests on through its own descent
    /// (``MutableTree/replaceValue(along:value:)``) and stays on the entry: true when done;
    /// false, nothing changed, when the cursor is not resting on an entry of an unchanged tree
    /// or the leaf has no room.
    func replaceValueInPlace(_ value: UnsafeRawBufferPointer) throws -> Bool {
        guard let writeTree, positioned, !leafTaken, writeTree.modifications == stamp else { return false }
        guard try writeTree.replaceValue(along: &path, value: value) else { return false }
        stamp = writeTree.modifications
        return true
    }

    // MARK: Walking

    /// Checks the lifetime, unpositions the cursor and returns the root to descend from.
    /// `keepingPath`: the caller overwrites the path's levels itself (``seek(_:)``); its
    /// levels mean nothing until the cursor is positioned again.
    private func restart(keepingPath: Bool = false) throws -> Page? {
        try lifetime.check()
        positioned = false
        leafTaken = false
        if !keepingPath { truncatePath(to: 0) }
        if let writeTree {
            stamp = writeTree.modifications
            return writeTree.root
        }
        return fixedRoot
    }

    /// Drops the path's levels from `depth` down. Element by element: `removeAll` and
    /// `removeSubrange` go through the array's general range replacement, which cost more than
    /// the rest of a seek's restart.
    @inline(__always)
    private func truncatePath(to depth: Int) {
        while path.count > depth { path.removeLast() }
    }

    @inline(__always)
    private func checkUnchanged() throws {
        if let writeTree, writeTree.modifications != stamp { throw StrataError.cursorInvalidated }
    }

    /// The cursor now rests on the leaf entry at the end of `path`; an overflow value is read here,
    /// so that ``value`` never has to fail.
    @inline(__always)
    private func land() throws -> Bool {
        let top = path[path.count - 1]
        if _slowPath(top.page.valueInfo(top.index).isOverflow) { try loadOverflow(top.page, top.index) }
        positioned = true
        leafTaken = false
        return true
    }

    private func loadOverflow(_ leaf: Page, _ index: Int) throws {
        let address = leaf.overflowAddress(index)
        if address == overflowAddress { return }
        overflowAddress = 0
        let bytes: [UInt8]
        do { bytes = try TreeRead.value(leaf, index, file) } catch {
            positioned = false
            throw error
        }
        keepOverflowValue(bytes)
        overflowAddress = address
    }

    /// Descends from `start` to its first (or last) leaf, appending to `path`.
    private func descend(from start: Page, toFirst: Bool) throws {
        var page = start
        while !page.isLeaf {
            let n = page.count
            guard n > 0 else {
                throw StrataError.corrupt("empty branch page at level \(page.level)",
                                          offset: Cursor.fileOffset(of: page))
            }
            let i = toFirst ? 0 : n - 1
            path.append((page, i))
            page = try TreeRead.nextChild(page, i, file)
        }
        path.append((page, toFirst ? 0 : max(page.count - 1, 0)))
    }

    /// The leaf at the end of `path` is used up: moves to the first entry of the next leaf that
    /// has one, checking that it starts above the last key of the leaf left behind.
    private func advanceLeaf() throws -> Bool {
        positioned = false
        leafTaken = false
        let left = path[path.count - 1].page
        while true {
            var depth = path.count - 2
            while depth >= 0 && path[depth].index + 1 >= path[depth].page.count { depth -= 1 }
            guard depth >= 0 else { return false }
            truncatePath(to: depth + 1)
            path[depth].index += 1
            let child = try TreeRead.nextChild(path[depth].page, path[depth].index, file)
            try descend(from: child, toFirst: true)
            let leaf = path[path.count - 1].page
            // An empty leaf under a branch of one child can remain after deletes: walk past it.
            if leaf.count == 0 { continue }
            if left.count > 0 && compareKeys(leaf.key(0), left.key(left.count - 1)) <= 0 {
                throw StrataError.corrupt("keys do not ascend from one leaf to the next",
                                          offset: Cursor.fileOffset(of: leaf))
            }
            return try land()
        }
    }

    /// The leaf at the end of `path` is used up backwards: moves to the last entry of the
    /// previous leaf that has one, checking that it ends below the first key of the leaf left.
    private func retreatLeaf() throws -> Bool {
        positioned = false
        let right = path[path.count - 1].page
        while true {
            var depth = path.count - 2
            while depth >= 0 && path[depth].index == 0 { depth -= 1 }
            guard depth >= 0 else { return false }
            truncatePath(to: depth + 1)
            path[depth].index -= 1
            let child = try TreeRead.child(path[depth].page, path[depth].index, file)
            try descend(from: child, toFirst: false)
            let leaf = path[path.count - 1].page
            if leaf.count == 0 { continue }
            if right.count > 0 && compareKeys(leaf.key(leaf.count - 1), right.key(0)) >= 0 {
                throw StrataError.corrupt("keys do not descend from one leaf to the previous",
                                          offset: Cursor.fileOffset(of: leaf))
            }
            return try land()
        }
    }
}
