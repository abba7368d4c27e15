/// Raw access for ``ByteReader``: the one load from bytes that came from a file. The reader's
/// own reads go through it, and so do the decoders of fixed layouts that read fields at known
/// offsets (``FrameHeader/decode(_:at:)``, ``FileHeader/decode(_:)``).
///
/// Invariants: `bytes` is lent by the caller for the call (a reader borrows its buffer and must
/// not outlive it, see ``ByteReader``); the load happens only when `offset ≥ 0` and
/// `offset + size ≤ bytes.count`, checked here in every build, so a length or offset read from
/// the file can never lead to a read outside `bytes`: it yields `nil`. No alignment is assumed
/// (`loadUnaligned`); the bytes are little-endian (FORMAT.md).
extension ByteReader {
    /// The little-endian `T` at `offset` of `bytes`, or `nil` when it does not lie wholly inside.
    @inline(__always)
    static func loadLE<T: FixedWidthInteger>(_ type: T.Type, from bytes: UnsafeRawBufferPointer,
                                             at offset: Int) -> T? {
        guard offset >= 0, offset <= bytes.count - MemoryLayout<T>.size else { return nil }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
