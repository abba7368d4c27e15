import StrataStorage

/// A word index entry's value (FORMAT.md §12, "Word indexes"): a block of postings, the rows
/// holding one word from the entry key's primary key on, in primary-key order, each with the
/// word's count in every property of the index.
///
/// A posting is the difference between its primary key and the one before it (an unsigned
/// LEB128 varint, at least 1; the first posting has none: its key is the entry's), then one
/// varint count per property (at most 32 bits each, their sum at least 1). A word's blocks
/// partition its postings: each holds keys above every key of the block before it.
///
/// Blocks replace an entry per word and row (decision 87): a commit rewrites one block per word
/// it changed where it put one entry per word and row, a block of postings takes a few bytes
/// each where an entry repeated the word and the key, and a search decodes bytes where it
/// stepped a cursor per row.
enum PostingBlock {
    /// The bytes a block grows to before the next posting starts another: small enough that a
    /// commit changing one row rewrites little, large enough that the word and key in an entry's
    /// key are a small part of it (decision 87). Any size reads the same.
    static let targetBytes = 64

    /// Postings in ascending key order, written as blocks: a block ends at the first posting
    /// that brings it to the target size.
    struct Writer {
        let targetBytes: Int
        private var blocks: [(first: UInt64, bytes: [UInt8])] = []
        private var block: [UInt8] = []
        private var first: UInt64 = 0, last: UInt64 = 0

        init(targetBytes: Int) { self.targetBytes = max(1, targetBytes) }

        /// Appends a posting whose counts are given.
        mutating func append(_ pk: UInt64, counts: ArraySlice<UInt32>) {
            begin(pk)
            for count in counts { RowCodec.appendVarint(&block, UInt64(count)) }
            end()
        }

        /// Appends a posting whose counts are bytes of a stored block, copied as they are.
        mutating func append(_ pk: UInt64, storedCounts: UnsafeRawBufferPointer) {
            begin(pk)
            block.append(contentsOf: storedCounts)
            end()
        }

        /// The blocks written.
        mutating func finish() -> [(first: UInt64, bytes: [UInt8])] {
            if !block.isEmpty { blocks.append((first, block)) }
            block = []
            return blocks
        }

        private mutating func begin(_ pk: UInt64) {
            if block.isEmpty {
                first = pk
                block.reserveCapacity(targetBytes + 16)
            } else {
                RowCodec.appendVarint(&block, pk - last)
            }
            last = pk
        }

        private mutating func end() {
            if block.count >= targetBytes {
                blocks.append((first, block))
                block = []
            }
        }
    }
}

/// Reads the postings of one block in order; every malformed byte is a `corrupt` error naming
/// the tree (a block is input from a file: nothing in it may trap).
struct PostingBlockReader {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    /// The current posting's primary key (the block's first key before the first ``next``).
    private(set) var pk: UInt64
    private var started = false

    init(_ bytes: UnsafeRawBufferPointer, firstKey: UInt64) {
        self.bytes = bytes
        self.pk = firstKey
    }

    /// Moves to the next posting and returns its occurrences in the properties `searched` marks
    /// (parallel to the index's); nil after the last.
    @inline(__always)
    mutating func next(searched: [Bool], tree: String) throws -> Int? {
        guard try advance(tree: tree) else { return nil }
        let fields = searched.count
        if let short = oneByteCounts(fields, searched: searched) {
            guard short.total > 0 else { throw Self.corrupt(tree, "a posting counts 0 occurrences") }
            return short.selected
        }
        var total = 0, selected = 0
        for field in 0..<fields {
            let n = Int(try readVarint(bits: 32, tree: tree))
            total += n
            if searched[field] { selected += n }
        }
        guard total > 0 else { throw Self.corrupt(tree, "a posting counts 0 occurrences") }
        return selected
    }

    /// Moves to the next posting and appends its `fieldCount` counts to `counts`; false after
    /// the last.
    mutating func next(fieldCount: Int, into counts: inout [UInt32], tree: String) throws -> Bool {
        guard try advance(tree: tree) else { return false }
        var total: UInt64 = 0
        for _ in 0..<fieldCount {
            let n = try readVarint(bits: 32, tree: tree)
            total += n
            counts.append(UInt32(n))
        }
        guard total > 0 else { throw Self.corrupt(tree, "a posting counts 0 occurrences") }
        return true
    }

    /// Moves to the next posting and returns where its counts lie in the block (checked as
    /// ``next(searched:tree:)`` checks them); nil after the last.
    mutating func nextCounts(fieldCount: Int, tree: String) throws -> Range<Int>? {
        guard try advance(tree: tree) else { return nil }
        let start = position
        if let short = oneByteCounts(fieldCount, searched: nil) {
            guard short.total > 0 else { throw Self.corrupt(tree, "a posting counts 0 occurrences") }
            return start..<position
        }
        var total: UInt64 = 0
        for _ in 0..<fieldCount { total += try readVarint(bits: 32, tree: tree) }
        guard total > 0 else { throw Self.corrupt(tree, "a posting counts 0 occurrences") }
        return start..<position
    }

    /// The key of the block's last posting, the counts passed over (each varint's bytes, with
    /// no value built; the counts are checked when the block is read). `corrupt` for a key
    /// difference out of bounds or a block cut inside a posting.
    mutating func lastKey(fieldCount: Int, tree: String) throws -> UInt64 {
        while try advance(tree: tree) {
            for _ in 0..<fieldCount {
                while true {
                    guard position < bytes.count else { throw Self.corrupt(tree, "a posting is cut short") }
                    let byte = bytes[position]
                    position += 1
                    if byte < 0x80 { break }
                }
            }
        }
        return pk
    }

    /// The current posting's counts when each is one byte (nearly every posting): their sum,
    /// and the sum of those `searched` marks (all, when nil); the position moves past them.
    /// Nil, with nothing read, when a count takes more bytes.
    @inline(__always)
    private mutating func oneByteCounts(_ fields: Int, searched: [Bool]?) -> (total: Int, selected: Int)? {
        guard fields <= bytes.count - position else { return nil }
        var total = 0, selected = 0
        for field in 0..<fields {
            let byte = Int(bytes[position + field])
            if byte >= 0x80 { return nil }
            total += byte
            if searched?[field] ?? true { selected += byte }
        }
        position += fields
        return (total, selected)
    }

    /// Reads the next posting's key difference (none for the first); false at the end.
    @inline(__always)
    private mutating func advance(tree: String) throws -> Bool {
        if !started {
            started = true
            guard !bytes.isEmpty else { throw Self.corrupt(tree, "an entry holds no posting") }
            return true
        }
        guard position < bytes.count else { return false }
        let delta = try readVarint(bits: 64, tree: tree)
        guard delta >= 1 else { throw Self.corrupt(tree, "a posting repeats the key before it") }
        guard pk <= UInt64.max - delta else { throw Self.corrupt(tree, "a posting's key is past 2⁶⁴") }
        pk += delta
        return true
    }

    /// An unsigned LEB128 varint of at most `bits` bits (32 or 64), in its shortest form or not.
    @inline(__always)
    private mutating func readVarint(bits: Int, tree: String) throws -> UInt64 {
        var value: UInt64 = 0, shift = 0
        while true {
            guard position < bytes.count else { throw Self.corrupt(tree, "a posting is cut short") }
            let byte = bytes[position]
            position += 1
            let part = UInt64(byte & 0x7F)
            guard shift < bits, shift == 0 || part >> (64 - shift) == 0 else {
                throw Self.corrupt(tree, "a posting's varint is longer than \(bits) bits")
            }
            value |= part << shift
            shift += 7
            if byte < 0x80 { break }
        }
        guard bits == 64 || value <= UInt64(UInt32.max) else {
            throw Self.corrupt(tree, "a posting counts more than 2³² occurrences")
        }
        return value
    }

    private static func corrupt(_ tree: String, _ what: String) -> StrataError {
        StrataError.corrupt("\(tree): \(what)", offset: nil)
    }
}
