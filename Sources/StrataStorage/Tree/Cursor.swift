/// Walks one tree of a snapshot in key order, forwards or backwards.
///
/// A cursor starts unpositioned; `first()`, `last()` or `seek(_:)` position it, `next()` and
/// `previous()` move it, and each returns whether the cursor now rests on an entry.
/// ``key`` and ``value`` borrow the page's memory: they are valid until the cursor moves or its
/// transaction ends (bbolt's rule). A cursor of a write transaction is invalidated by any write
/// to its tree.
public final class Cursor {
    private let root: Page?
    private let file: PageFile
    /// The descent from the root: a page and the index chosen in it, leaf last.
    private var path: [(page: Page, index: Int)] = []
    /// Whether the cursor rests on an entry, so that ``key`` and ``value`` may be read.
    public private(set) var isValid = false

    init(root: Page?, file: PageFile) {
        self.root = root
        self.file = file
        // Room for any real tree's height, so a descent never grows the array.
        path.reserveCapacity(8)
    }

    /// The current key. Requires `isValid`.
    public var key: UnsafeRawBufferPointer {
        precondition(isValid, "Cursor.key read while the cursor is not on an entry")
        let top = path[path.count - 1]
        return top.page.key(top.index)
    }

    /// The current value, borrowed. Requires `isValid`. An overflow value (larger than a
    /// quarter page) is read from its frame into a buffer the cursor keeps until it moves.
    public var value: UnsafeRawBufferPointer {
        precondition(isValid, "Cursor.value read while the cursor is not on an entry")
        let top = path[path.count - 1]
        if top.page.valueInfo(top.index).isOverflow {
            let address = top.page.overflowAddress(top.index)
            if overflowAddress != address {
                overflowBuffer.deallocate()
                let bytes = (try? TreeRead.value(top.page, top.index, file)) ?? []
                overflowBuffer = .allocate(byteCount: bytes.count, alignment: 8)
                bytes.withUnsafeBytes { overflowBuffer.copyMemory(from: $0) }
                overflowAddress = address
            }
            return UnsafeRawBufferPointer(overflowBuffer)
        }
        return top.page.valueBytes(top.index)
    }

    /// The last overflow value read through `value` (empty if reading it failed: use
    /// ``copyValue()`` to see the error).
    /// Allocated on the first overflow value read, so that a cursor costs no buffer otherwise.
    private var overflowBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var overflowAddress: UInt64 = 0

    deinit { overflowBuffer.deallocate() }

    /// Whether the current value lives in an overflow frame. Requires `isValid`.
    public var isOverflow: Bool {
        let top = path[path.count - 1]
        return top.page.valueInfo(top.index).isOverflow
    }

    /// The current value, copied; reads an overflow value with full error reporting.
    public func copyValue() throws -> [UInt8] {
        precondition(isValid, "Cursor.copyValue() called while the cursor is not on an entry")
        let top = path[path.count - 1]
        return try TreeRead.value(top.page, top.index, file)
    }

    /// The current key, copied.
    public func copyKey() -> [UInt8] { [UInt8](key) }

    /// Moves to the smallest key.
    @discardableResult
    public func first() throws -> Bool {
        path.removeAll(keepingCapacity: true)
        guard let root else { isValid = false; return false }
        try descend(from: root, toFirst: true)
        return settleForward()
    }

    /// Moves to the largest key.
    @discardableResult
    public func last() throws -> Bool {
        path.removeAll(keepingCapacity: true)
        guard let root else { isValid = false; return false }
        try descend(from: root, toFirst: false)
        isValid = path[path.count - 1].page.count > 0
        return isValid
    }

    /// Moves to the first key ≥ `key` (or past the end if there is none).
    @discardableResult
    public func seek(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try seek($0) }
    }

    /// Moves to the first key ≥ `key` (or past the end if there is none); returns whether the cursor
    /// rests on an entry. `key` is read only during the call.
    @discardableResult
    public func seek(_ key: UnsafeRawBufferPointer) throws -> Bool {
        path.removeAll(keepingCapacity: true)
        guard var page = root else { isValid = false; return false }
        let k = key.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        while !page.isLeaf {
            let i = page.childIndex(for: k, key.count)
            path.append((page, i))
            page = try TreeRead.child(page, i, file)
        }
        path.append((page, page.lowerBound(k, key.count).index))
        return try settleForwardLoading()
    }

    /// Moves to the last key ≤ `key`.
    @discardableResult
    public func seekBackward(_ key: [UInt8]) throws -> Bool {
        guard try seek(key) else { return try last() }
        if compareKeys(self.key, key.withUnsafeBytes { $0 }) == 0 { return true }
        return try previous()
    }

    /// Moves to the next key; `false` (and not valid) past the last.
    @discardableResult
    public func next() throws -> Bool {
        guard isValid else { return false }
        path[path.count - 1].index += 1
        if path[path.count - 1].index < path[path.count - 1].page.count { return true }
        return try settleForwardLoading()
    }

    /// Moves to the previous key; `false` (and not valid) before the first.
    @discardableResult
    public func previous() throws -> Bool {
        guard isValid else { return false }
        if path[path.count - 1].index > 0 {
            path[path.count - 1].index -= 1
            return true
        }
        // Climb to the nearest ancestor that has a child to the left, then take its rightmost leaf.
        var depth = path.count - 2
        while depth >= 0 && path[depth].index == 0 { depth -= 1 }
        guard depth >= 0 else { isValid = false; return false }
        path.removeSubrange((depth + 1)...)
        path[depth].index -= 1
        let child = try TreeRead.child(path[depth].page, path[depth].index, file)
        try descend(from: child, toFirst: false)
        isValid = path[path.count - 1].page.count > 0
        return isValid
    }

    private func descend(from start: Page, toFirst: Bool) throws {
        var page = start
        while !page.isLeaf {
            let i = toFirst ? 0 : page.count - 1
            path.append((page, i))
            page = try TreeRead.nextChild(page, i, file)
        }
        path.append((page, toFirst ? 0 : max(page.count - 1, 0)))
    }

    private func settleForward() -> Bool {
        isValid = path[path.count - 1].index < path[path.count - 1].page.count
        return isValid
    }

    /// If the leaf index is past the end, moves to the first entry of the next leaf.
    private func settleForwardLoading() throws -> Bool {
        if path[path.count - 1].index < path[path.count - 1].page.count { isValid = true; return true }
        var depth = path.count - 2
        while depth >= 0 && path[depth].index + 1 >= path[depth].page.count { depth -= 1 }
        guard depth >= 0 else { isValid = false; return false }
        path.removeSubrange((depth + 1)...)
        path[depth].index += 1
        let child = try TreeRead.nextChild(path[depth].page, path[depth].index, file)
        try descend(from: child, toFirst: true)
        return settleForward()
    }
}
