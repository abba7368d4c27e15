/// Reads little-endian integers, varints and byte strings from untrusted bytes.
///
/// Every read is bounds-checked and throws ``StrataError/corrupt(_:offset:)`` instead of
/// trapping: this is the only way decoders touch bytes that came from a file.
/// The reader borrows `buffer`; it must not outlive the memory it reads.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    private(set) var position: Int
    /// The file offset of `buffer[0]`, for error messages.
    let fileOffset: UInt64?
    let context: String

    init(_ buffer: UnsafeRawBufferPointer, fileOffset: UInt64? = nil, context: String) {
        self.buffer = buffer
        self.position = 0
        self.fileOffset = fileOffset
        self.context = context
    }

    var remaining: Int { buffer.count - position }
    var isAtEnd: Bool { position >= buffer.count }

    func fail(_ what: String) -> StrataError {
        .corrupt("\(context): \(what)", offset: fileOffset.map { $0 &+ UInt64(position) })
    }

    private mutating func need(_ n: Int) throws {
        guard n >= 0, n <= remaining else { throw fail("needs \(n) bytes, \(remaining) left") }
    }

    mutating func u8() throws -> UInt8 {
        try need(1)
        defer { position += 1 }
        return buffer[position]
    }

    mutating func u16() throws -> UInt16 {
        try need(2)
        defer { position += 2 }
        return buffer.loadUnaligned(fromByteOffset: position, as: UInt16.self).littleEndian
    }

    mutating func u32() throws -> UInt32 {
        try need(4)
        defer { position += 4 }
        return buffer.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian
    }

    mutating func u64() throws -> UInt64 {
        try need(8)
        defer { position += 8 }
        return buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self).littleEndian
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try u8()
            guard shift < 64 else { throw fail("varint longer than 10 bytes") }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A varint that must be at most `limit`, returned as `Int`.
    mutating func length(max limit: Int) throws -> Int {
        let v = try varint()
        guard v <= UInt64(max(0, limit)) else { throw fail("length \(v) above limit \(limit)") }
        return try count(v, "length")
    }

    /// A varint that must fit a `UInt32` (tree ids).
    mutating func u32Varint(_ what: String) throws -> UInt32 {
        let v = try varint()
        guard let id = UInt32(exactly: v) else { throw fail("\(what) \(v) does not fit 32 bits") }
        return id
    }

    /// `value`, read from this buffer, as an `Int` (the checked conversion every decoder uses:
    /// ``FileInteger/int(_:_:offset:)``).
    func count<T: BinaryInteger>(_ value: T, _ what: String) throws -> Int {
        try FileInteger.int(value, "\(context): \(what)", offset: fileOffset.map { $0 &+ UInt64(position) })
    }

    /// A tree name of `length` bytes: 1...255 bytes of valid UTF-8 (FORMAT.md §5, §6). Invalid
    /// UTF-8 is refused, never replaced: two different names must not decode to one string.
    mutating func treeName(length: Int) throws -> String {
        guard length >= 1, length <= StoreLimits.maxTreeNameLength else { throw fail("tree name length \(length)") }
        let bytes = try bytes(length)
        guard let name = String(validating: bytes, as: UTF8.self) else { throw fail("tree name is not valid UTF-8") }
        return name
    }

    /// Borrows the next `n` bytes (valid as long as `buffer`).
    mutating func bytes(_ n: Int) throws -> UnsafeRawBufferPointer {
        try need(n)
        defer { position += n }
        return UnsafeRawBufferPointer(rebasing: buffer[position..<position + n])
    }

    mutating func skip(_ n: Int) throws {
        try need(n)
        position += n
    }
}
