import CLZ4

/// LZ4 block compression through the system's liblz4 (FORMAT.md, "Compression").
enum LZ4 {
    /// Compresses `source` into `destination` and returns the compressed length, or `nil` when
    /// compression would not save at least 1/16 of the bytes (the caller then stores raw).
    static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard source.count > 64, let src = source.baseAddress, let dst = destination.baseAddress else { return nil }
        let limit = source.count - source.count / 16
        let written = LZ4_compress_default(
            src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(min(limit, destination.count)))
        return written > 0 ? Int(written) : nil
    }

    /// Decompresses exactly `destination.count` bytes; `false` when the input is malformed or
    /// does not decode to exactly that length. Never reads or writes out of bounds.
    static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Bool {
        guard let src = source.baseAddress, let dst = destination.baseAddress else {
            return source.isEmpty && destination.isEmpty
        }
        let n = LZ4_decompress_safe(
            src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count))
        return n == Int32(destination.count)
    }

    static func compressBound(_ count: Int) -> Int { Int(LZ4_compressBound(Int32(count))) }
}
