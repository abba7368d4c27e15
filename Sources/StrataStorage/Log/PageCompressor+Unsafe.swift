/// Raw access for ``PageBatch``: its block of memory (images first, payloads after) and its
/// per-page entries.
///
/// Invariants:
/// - **Lifetime.** ``PageBatch/memory`` is allocated in `init` and freed in `deinit`; every
///   view below is lent to a call that returns before the batch can be released (a worker
///   holds its own reference while it compresses).
/// - **Bounds.** Slot `i` < `capacity` (checked, once per page): its image is the `pageSize`
///   bytes at `i * imageStride` (≥ `pageSize`), its payload the `outputStride` bytes at
///   `capacity * imageStride + i * outputStride`; lengths are checked against those sizes.
/// - **Exclusivity.** Until a batch is submitted, only the thread filling it touches it; while
///   it is compressed, each thread touches only the pages it took (``PageBatch/compressUnclaimed()``
///   hands each page to one thread): their images, payloads and ``PageBatch/Slot`` entries are
///   disjoint memory. The filling thread reads the batch again only after every page is done
///   (its own, and a helper's signal, which orders the helper's writes before the read).
extension PageBatch {
    static func allocateBuffer(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        .allocate(byteCount: byteCount, alignment: 16)
    }

    /// Per-page entries for `capacity` pages, initialized.
    static func allocateSlots(_ capacity: Int) -> UnsafeMutablePointer<Slot> {
        let slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        slots.initialize(repeating: Slot(), count: capacity)
        return slots
    }

    /// Frees ``PageBatch/memory`` and ``PageBatch/slots``; `deinit` only.
    func deallocateMemory() {
        memory.deallocate()
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Page `i`'s entry.
    func slot(_ i: Int) -> Slot {
        precondition(i >= 0 && i < capacity, "page slot \(i) of \(capacity)")
        return slots[i]
    }

    func setRawLength(_ i: Int, _ length: Int) {
        precondition(i >= 0 && i < capacity, "page slot \(i) of \(capacity)")
        slots[i].rawLength = length
    }

    func setFrame(_ i: Int, storedLength: Int, flags: UInt8) {
        precondition(i >= 0 && i < capacity && storedLength <= max(pageSize, outputStride),
                     "a stored length of \(storedLength) in page slot \(i) of \(capacity)")
        slots[i].storedLength = storedLength
        slots[i].flags = flags
    }

    func setChecksum(_ i: Int, _ checksum: UInt32) {
        precondition(i >= 0 && i < capacity, "page slot \(i) of \(capacity)")
        slots[i].checksum = checksum
    }

    /// Slot `i`'s image buffer: all `pageSize` bytes, or its first `length`.
    func imageBuffer(_ i: Int, length: Int? = nil) -> UnsafeMutableRawBufferPointer {
        let length = length ?? pageSize
        precondition(i >= 0 && i < capacity && length >= 0 && length <= pageSize, "page slot \(i) of \(capacity)")
        return UnsafeMutableRawBufferPointer(start: memory.baseAddress! + i * imageStride, count: length)
    }

    /// Slot `i`'s payload buffer (`outputStride` bytes).
    func outputBuffer(_ i: Int) -> UnsafeMutableRawBufferPointer {
        precondition(i >= 0 && i < capacity, "page slot \(i) of \(capacity)")
        return UnsafeMutableRawBufferPointer(start: memory.baseAddress! + capacity * imageStride + i * outputStride,
                                             count: outputStride)
    }

    /// Slot `i`'s stored payload once compressed: the LZ4 block, or the image kept raw.
    func storedPayload(_ i: Int) -> UnsafeRawBufferPointer {
        let entry = slot(i)
        if entry.flags & Format.flagCompressed != 0 {
            return UnsafeRawBufferPointer(rebasing: outputBuffer(i)[..<entry.storedLength])
        }
        return UnsafeRawBufferPointer(imageBuffer(i, length: entry.rawLength))
    }
}
