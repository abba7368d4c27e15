/// Reads little-endian integers, varints and byte strings from untrusted bytes.
///
/// Every read is bounds-checked and throws ``StrataError/corrupt(_:offset:)`` instead of
/// trapping: this is the only way decoders touch bytes that came from a file (the decoders of
/// fixed layouts, frame headers and header slots, read their fields through the same checked
/// load, ``loadLE(_:from:at:)``, in `ByteReader+Unsafe.swift`).
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

    /// The next little-endian `T` (through the one checked load, ``loadLE(_:from:at:)``).
    @inline(__always)
    private mutating func next<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard let value = ByteReader.loadLE(T.self, from: buffer, at: position) else {
            throw fail("needs \(MemoryLayout<T>.size) bytes, \(remaining) left")
        }
        position += MemoryLayout<T>.size
        return value
    }

    mutating func u8() throws -> UInt8 { try next(UInt8.self) }
    mutating func u16() throws -> UInt16 { try next(UInt16.self) }
    mutating func u32() throws -> UInt32 { try next(UInt32.self) }
    mutating func u64() throws -> UInt64 { try next(UInt64.self) }

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
        let length = try varint()
        guard length <= UInt64(max(0, limit)) else { throw fail("length \(length) above limit \(limit)") }
        return try count(length, "length")
    }

    /// A varint that must fit a `UInt32` (tree ids).
    mutating func u32Varint(_ what: String) throws -> UInt32 {
        let value = try varint()
        guard let id = UInt32(exactly: value) else { throw fail("\(what) \(value) does not fit 32 bits") }
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
