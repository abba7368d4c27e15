/// The entries of one leaf, from where a cursor rested to the leaf's end, read by position: a
/// scan that visits every entry takes its tree a leaf at a time (``Cursor/restOfLeaf()``), with
/// no lifetime check, descent path or reference count per entry as ``Cursor/next()`` has.
///
/// **Borrowed bytes.** ``key(_:)`` and ``inlineValue(_:)`` lend the leaf's memory, which this
/// value keeps alive (it holds the page): the bytes stay readable however long it is kept, but
/// are the tree's entries only while nothing writes the tree. A write transaction's leaf can
/// change in place; once its tree changed (or for a position outside ``indices``), both return
/// empty bytes, as a cursor's accessors do (keys are never empty), and the cursor's next move
/// throws ``StrataError/cursorInvalidated``.
package struct LeafEntries {
    private let page: Page?
    private let file: PageFile?
    /// The write transaction's tree, whose modification count must still be `stamp`.
    private let writeTree: MutableTree?
    private let stamp: UInt64
    /// The positions of the entries taken: from the cursor's entry to the leaf's last.
    package let indices: Range<Int>

    /// No entries (a cursor not resting on one).
    init() {
        page = nil
        file = nil
        writeTree = nil
        stamp = 0
        indices = 0..<0
    }

    init(page: Page, from start: Int, file: PageFile, writeTree: MutableTree?, stamp: UInt64) {
        self.page = page
        self.file = file
        self.writeTree = writeTree
        self.stamp = stamp
        indices = start..<page.count
    }

    /// Whether position `i` may be read: inside the leaf as it was taken, its tree unchanged.
    @inline(__always)
    private func readable(_ i: Int) -> Page? {
        guard let page, indices.contains(i) else { return nil }
        if let writeTree, writeTree.modifications != stamp { return nil }
        return page
    }

    /// The key at position `i`, borrowed from the leaf; empty when it cannot be read (above).
    @inline(__always)
    package func key(_ i: Int) -> UnsafeRawBufferPointer {
        guard let page = readable(i) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return page.key(i)
    }

    /// The value at position `i` when the leaf holds it inline, borrowed from the leaf; `nil`
    /// for a value in an overflow frame (``value(_:)`` reads it) or a position that cannot be
    /// read (then ``key(_:)`` is empty too).
    @inline(__always)
    package func inlineValue(_ i: Int) -> UnsafeRawBufferPointer? {
        guard let page = readable(i) else { return nil }
        if page.valueInfo(i).isOverflow { return nil }
        return page.valueBytes(i)
    }

    /// The value at position `i`, copied, an overflow value read from its frame.
    ///
    /// - Throws: ``StrataError/cursorInvalidated`` when the tree changed since the leaf was
    ///   taken or `i` is outside ``indices``; the read's errors for an overflow frame.
    package func value(_ i: Int) throws -> [UInt8] {
        guard let page = readable(i), let file else { throw StrataError.cursorInvalidated }
        return try TreeRead.value(page, i, file)
    }
}
