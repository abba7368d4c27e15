/// Raw access for ``Cursor``: the buffer it keeps the current overflow value in, so that
/// ``Cursor/value`` can lend it like a page's bytes.
///
/// Invariants:
/// - **Lifetime.** ``overflowBuffer`` is allocated by ``keepOverflowValue(_:)`` (the first time
///   the cursor lands on an overflow value, or when a longer one needs more room) and freed in
///   `deinit`; until then it is empty with no address. ``overflowValue`` lends it until the
///   cursor next moves: a move that lands on another overflow value replaces its content (and
///   perhaps the buffer), which is the borrowing rule ``Cursor`` documents for ``Cursor/value``.
/// - **Bounds.** ``overflowCount`` is the length of the value copied in, never more than the
///   buffer's `count`: the buffer is grown to the value's length before the copy.
/// - **Alignment.** Bytes: none needed.
extension Cursor {
    /// The current overflow value, lent until the cursor moves.
    var overflowValue: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: overflowBuffer.baseAddress, count: overflowCount)
    }

    /// Copies `value` into ``overflowBuffer``, growing it first if it is too small.
    func keepOverflowValue(_ value: [UInt8]) {
        if overflowBuffer.count < value.count {
            overflowBuffer.deallocate()
            overflowBuffer = .allocate(byteCount: value.count, alignment: 8)
        }
        // An overflow value can be empty (a long key alone overflows a quarter page).
        value.withUnsafeBytes { source in
            if let start = source.baseAddress, let destination = overflowBuffer.baseAddress, source.count > 0 {
                destination.copyMemory(from: start, byteCount: source.count)
            }
        }
        overflowCount = value.count
    }

    /// Frees ``overflowBuffer``; `deinit` only.
    func deallocateOverflowBuffer() { overflowBuffer.deallocate() }
}
