/// LZ4 block compression through the system's liblz4 (FORMAT.md, "Compression"). The calls
/// into the C library, which read and write through pointers, are in `LZ4+Unsafe.swift`.
enum LZ4 {
    /// Compresses `source` into `destination` and returns the compressed length, or `nil` when
    /// compression would not save at least 1/16 of the bytes (the caller then stores raw).
    static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard source.count > 64, source.count <= maxInput, destination.baseAddress != nil else { return nil }
        let limit = source.count - source.count / 16
        let written = compressBlock(source, into: destination, capacity: min(limit, destination.count))
        return written > 0 ? written : nil
    }

    /// Decompresses exactly `destination.count` bytes; `false` when the input is malformed or
    /// does not decode to exactly that length. Never reads or writes out of bounds.
    static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Bool {
        guard source.baseAddress != nil, destination.baseAddress != nil else {
            return source.isEmpty && destination.isEmpty
        }
        // liblz4 counts in `Int32`; a frame claiming more (its lengths come from the file) is
        // no block LZ4 wrote.
        guard source.count <= Int(Int32.max), destination.count <= Int(Int32.max) else { return false }
        return decompressBlock(source, into: destination) == destination.count
    }

    /// The most bytes LZ4 compresses in one block (`LZ4_MAX_INPUT_SIZE`); larger payloads are
    /// stored raw.
    static let maxInput = 0x7E00_0000

    /// The largest compressed size of `count` bytes (`LZ4_COMPRESSBOUND`, in `Int`).
    static func compressBound(_ count: Int) -> Int { count + count / 255 + 16 }
}
