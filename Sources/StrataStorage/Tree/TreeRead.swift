/// Read-only descent shared by snapshots, write transactions and cursors.
enum TreeRead {
    /// The child of branch `page` at cell `i`: in memory if no checkpoint has written it yet,
    /// else from the page cache or the file (checked to be exactly one level down).
    /// A child read from the file is checked against the separator keys of the cell that leads
    /// to it (``PageFile/child(of:at:readingAhead:)``).
    @inline(__always)
    static func child(_ page: Page, _ i: Int, _ file: PageFile) throws -> Page {
        if let resident = page.children[i] { return resident }
        return try file.child(of: page, at: i, readingAhead: false)
    }

    /// `child`, for walks in key order: leaves come with read-ahead.
    @inline(__always)
    static func nextChild(_ page: Page, _ i: Int, _ file: PageFile) throws -> Page {
        if let resident = page.children[i] { return resident }
        return try file.child(of: page, at: i, readingAhead: page.level == 1)
    }

    /// The leaf that holds (or would hold) `key`, and the key's lower-bound index in it.
    @inline(__always)
    static func find(_ root: Page, _ key: UnsafeRawBufferPointer,
                     _ file: PageFile) throws -> (leaf: Page, index: Int, found: Bool) {
        var page = root
        while !page.isLeaf {
            page = try child(page, page.childIndex(for: key), file)
        }
        let (i, found) = page.lowerBound(key)
        return (page, i, found)
    }

    /// Copies the value of leaf cell `i` (reading its overflow frame if it has one).
    static func value(_ leaf: Page, _ i: Int, _ file: PageFile) throws -> [UInt8] {
        let (length, overflow) = leaf.valueInfo(i)
        if overflow { return try file.overflowValue(at: leaf.overflowAddress(i), length: length) }
        return [UInt8](leaf.valueBytes(i))
    }
}
