/// Raw access for ``LogWriter``: the memory it assembles frames in (``scratch``) and gathers
/// them in (``gathered``), both owned by the writer.
///
/// Invariants:
/// - **Lifetime.** Both buffers are allocated here (``allocateBuffer(byteCount:)``) and freed
///   in `deinit` (``deallocateBuffers()``); ``reserveScratch(_:)`` replaces `scratch` with a
///   larger one, so views of it are lent only until the next append: ``append`` hands its
///   frame to the file or copies it into `gathered` before it returns. The writer is used by
///   one thread at a time (the store's writer gate), so no view outlives a replacement.
/// - **Bounds.** Every view and copy takes a range and checks (`precondition`) that it lies
///   inside its buffer: once per frame, never per key. `gatheredLength` stays within
///   `gathered` because ``gather(_:)`` checks the room first.
/// - **Alignment.** Byte buffers: none needed (16 only helps `memcpy` and LZ4).
extension LogWriter {
    /// Uninitialized memory for frames.
    static func allocateBuffer(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        .allocate(byteCount: byteCount, alignment: 16)
    }

    /// Frees both buffers; `deinit` only.
    func deallocateBuffers() {
        scratch.deallocate()
        gathered?.deallocate()
    }

    /// Grows ``scratch`` to at least `byteCount` bytes (its content is not kept).
    func reserveScratch(_ byteCount: Int) {
        if scratch.count < byteCount {
            scratch.deallocate()
            scratch = LogWriter.allocateBuffer(byteCount: max(byteCount, scratch.count * 2))
        }
    }

    /// The bytes of ``scratch`` in `range`, lent until the next ``reserveScratch(_:)``.
    func scratchBytes(_ range: Range<Int>) -> UnsafeMutableRawBufferPointer {
        let buffer = scratch
        precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count,
                     "scratch range \(range) outside 0..<\(buffer.count)")
        return UnsafeMutableRawBufferPointer(rebasing: buffer[range])
    }

    /// Copies `bytes` (possibly empty) into ``scratch`` at `offset`.
    func copyIntoScratch(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        let destination = scratchBytes(offset..<offset + bytes.count)
        guard let source = bytes.baseAddress else { return }
        destination.baseAddress!.copyMemory(from: source, byteCount: bytes.count)
    }

    /// Zeroes the bytes of ``scratch`` in `range`.
    func zeroScratch(_ range: Range<Int>) {
        let destination = scratchBytes(range)
        guard !destination.isEmpty else { return }
        destination.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: destination.count)
    }

    /// The size of ``gathered``, or `nil` when frames are not gathered.
    var gatheredCapacity: Int? { gathered?.count }

    /// The frames gathered and not yet written, lent until the next append; `nil` when frames
    /// are not gathered.
    var gatheredFrames: UnsafeRawBufferPointer? {
        guard let gathered else { return nil }
        return UnsafeRawBufferPointer(rebasing: gathered[..<gatheredLength])
    }

    /// Appends `frame` to the gathered frames; the caller made room (``writeGathered()``).
    func gather(_ frame: UnsafeRawBufferPointer) {
        guard let gathered else { preconditionFailure("gather without gatherWrites(upTo:) or startGathering(upTo:)") }
        let used = gatheredLength
        precondition(frame.count <= gathered.count - used,
                     "a \(frame.count)-byte frame does not fit \(gathered.count - used) gathered bytes")
        if let source = frame.baseAddress {
            (gathered.baseAddress! + used).copyMemory(from: source, byteCount: frame.count)
        }
        gatheredLength = used + frame.count
    }
}
