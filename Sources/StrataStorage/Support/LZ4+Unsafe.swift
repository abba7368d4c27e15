import CLZ4

/// Raw access for ``LZ4``: the two calls into liblz4, which read and write through the
/// buffers' base addresses.
///
/// Invariants: both buffers are lent by the caller for the call; liblz4 reads at most
/// `source.count` bytes and writes at most `capacity` (compression) or `destination.count`
/// (`LZ4_decompress_safe`, which checks its input) bytes, so it stays inside them. Checked here
/// (`precondition`, once per frame): buffers with base addresses, counts that fit liblz4's
/// `Int32`, a capacity within the destination. `assumingMemoryBound(to: CChar.self)` only gives
/// the C signature its pointer type: liblz4 accesses the memory as bytes (`char`), as any
/// memory may be accessed.
extension LZ4 {
    /// `LZ4_compress_default` of all of `source` into at most `capacity` bytes of
    /// `destination`: the compressed length, or 0 when it does not fit.
    static func compressBlock(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
                              capacity: Int) -> Int {
        precondition(source.baseAddress != nil && source.count <= maxInput, "LZ4 input of \(source.count) bytes")
        precondition(destination.baseAddress != nil && capacity >= 0 && capacity <= destination.count
                        && capacity <= Int(Int32.max),
                     "LZ4 capacity \(capacity) for a \(destination.count)-byte buffer")
        return Int(LZ4_compress_default(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(capacity)))
    }

    /// `LZ4_decompress_safe` of all of `source` into `destination`: the decoded length, or a
    /// negative number when the input is malformed or does not fit.
    static func decompressBlock(_ source: UnsafeRawBufferPointer,
                                into destination: UnsafeMutableRawBufferPointer) -> Int {
        precondition(source.baseAddress != nil && destination.baseAddress != nil, "LZ4 decompression without buffers")
        precondition(source.count <= Int(Int32.max) && destination.count <= Int(Int32.max),
                     "LZ4 decompression of \(source.count) into \(destination.count) bytes")
        return Int(LZ4_decompress_safe(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count)))
    }
}
