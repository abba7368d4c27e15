import Dispatch
import Synchronization

/// Compresses page images on two threads while the caller goes on building pages: a file
/// written whole (compaction, backup) spends much of its time in LZ4, which needs nothing but
/// the image, while the rest (reading entries, packing pages, linking parents, appending)
/// needs the frame offsets that only appending in order gives (decision 85).
///
/// The caller encodes page images into the *filling* batch (``add(_:)``). When it is full the
/// caller takes the *in-flight* batch (``takeInFlight()``), appends its frames in order with
/// ``LogWriter/appendStored``, hands it back (``recycle(_:)``) and submits the filling batch
/// (``submitFilling()``), which a worker starts compressing while the caller fills the other.
/// Taking a batch, the caller compresses the pages no worker has taken yet (a worker takes
/// them one at a time too) and waits only for those a worker holds, so a busy or missing
/// thread pool costs parallelism, never progress. Pages are appended in exactly the order they
/// were added, each compressed as ``LogWriter/append`` compresses it, so the file is the same,
/// byte for byte, as one written page by page.
///
/// Used by one thread at a time (the writer's).
final class PageCompressor {
    /// Bytes of page images per batch (256 pages of 4 KiB): handing a batch over costs a
    /// worker's wake-up and the caller's wait for the worker's last page, which batches of 32
    /// pages paid often enough to lose what the second thread won (decision 85).
    static let batchBytes = 1 << 20

    /// Pages per batch for pages of `pageSize` bytes.
    static func batchSize(pageSize: Int) -> Int { max(8, batchBytes / max(pageSize, 1)) }

    let pageSize: Int
    private var filling: PageBatch
    private var spare: PageBatch?
    private var inFlight: PageBatch?

    /// `batchSize` pages per batch; `concurrent: false` compresses every batch on the caller's
    /// thread when it is taken (the same frames, one thread).
    init(pageSize: Int, batchSize: Int? = nil, concurrent: Bool = true) {
        let batchSize = batchSize ?? PageCompressor.batchSize(pageSize: pageSize)
        precondition(batchSize > 0, "a batch holds at least one page")
        self.pageSize = pageSize
        self.concurrent = concurrent
        filling = PageBatch(pageSize: pageSize, capacity: batchSize)
        spare = PageBatch(pageSize: pageSize, capacity: batchSize)
    }

    private let concurrent: Bool

    deinit {
        // A worker may still be compressing its share of the in-flight batch; it holds its own
        // reference, so nothing is freed under it. Finish the batch so no work outlives the writer.
        _ = takeInFlight()
    }

    /// Whether the filling batch has no room for another page.
    var fillingIsFull: Bool { filling.count == filling.capacity }
    /// Whether the filling batch holds pages not yet submitted.
    var hasFilling: Bool { filling.count > 0 }
    /// Whether a submitted batch waits to be taken.
    var hasInFlight: Bool { inFlight != nil }

    /// Encodes one page image into the filling batch: `encode` writes it into the buffer it
    /// is lent (`pageSize` bytes) and returns its length. Requires room (``fillingIsFull`` false).
    func add(_ encode: (UnsafeMutableRawBufferPointer) -> Int) {
        precondition(!fillingIsFull, "add to a full batch")
        filling.addImage(encode)
    }

    /// Starts compressing the filling batch (on a worker when concurrent) and makes a fresh
    /// one the filling batch. Requires no batch in flight (``takeInFlight()`` first).
    func submitFilling() {
        precondition(inFlight == nil, "one batch in flight at a time")
        let batch = filling
        filling = spare ?? PageBatch(pageSize: pageSize, capacity: batch.capacity)
        spare = nil
        inFlight = batch
        batch.open()
        guard concurrent else { return }
        DispatchQueue.global(qos: .userInitiated).async {
            guard batch.join() else { return }
            batch.compressUnclaimed()
            batch.signalCompressed()
        }
    }

    /// The in-flight batch, compressed: the caller compresses the pages no worker has taken
    /// yet, then waits for those a worker is compressing; `nil` when none is in flight. The
    /// caller reads its frames and hands it back with ``recycle(_:)``.
    func takeInFlight() -> PageBatch? {
        guard let batch = inFlight else { return nil }
        inFlight = nil
        batch.compressUnclaimed()
        if !batch.close() { batch.waitUntilCompressed() }
        return batch
    }

    /// Appends the in-flight batch's pages (compressed first, ``takeInFlight()``) to `log` in
    /// order, calling `placed` with each page's index in the batch and its frame, and returns
    /// how many it appended (0 when no batch was in flight).
    func appendInFlight(to log: LogWriter, txid: UInt64,
                        _ placed: (Int, (offset: UInt64, length: UInt64)) throws -> Void) throws -> Int {
        guard let batch = takeInFlight() else { return 0 }
        defer { recycle(batch) }
        for i in 0..<batch.count {
            let page = batch.slot(i)
            try placed(i, try log.appendStored(.page, txid: txid, flags: page.flags, stored: batch.storedPayload(i),
                                               rawLength: page.rawLength, payloadChecksum: page.checksum))
        }
        return batch.count
    }

    /// Returns a batch taken with ``takeInFlight()`` for reuse.
    func recycle(_ batch: PageBatch) {
        batch.reset()
        spare = batch
    }
}

/// One batch of page images and, once compressed, their frames' stored payloads. Its memory is
/// raw and its own (`PageCompressor+Unsafe.swift`).
///
/// Sendable by hand-over: the thread that adds images owns it until it is submitted; then the
/// caller and at most one worker take its pages one at a time (``compressUnclaimed()``), each
/// page by one thread; the caller reads it again once its own share is done and either no
/// worker joined (``close()``) or the worker signalled (``waitUntilCompressed()``; the signal
/// orders the worker's writes before the caller's reads).
final class PageBatch: @unchecked Sendable {
    let pageSize: Int
    let capacity: Int
    /// Bytes each slot's compressed payload may take (LZ4's bound for a whole page).
    let outputStride: Int
    /// Bytes from one image to the next: a page and three cache lines, so that no two images
    /// (nor an image and the page it is copied from) share an offset within 4 KiB, where the
    /// processor would take a store to one for a load from the other and stall the copy.
    let imageStride: Int
    /// Image and payload memory: `capacity` images `imageStride` bytes apart, then `capacity`
    /// payloads of `outputStride` bytes.
    let memory: UnsafeMutableRawBufferPointer
    /// Per page, in raw memory (threads compressing different pages write different entries
    /// at once, which an array's element setter does not allow).
    let slots: UnsafeMutablePointer<Slot>
    private(set) var count = 0

    /// One page's image length and, once compressed, its frame's stored payload.
    struct Slot {
        var rawLength = 0
        /// The stored payload's length: the LZ4 block's, or the image's when kept raw.
        var storedLength = 0
        var flags: UInt8 = 0
        var checksum: UInt32 = 0
    }

    /// Whether a worker helps compress: 0 open (none yet), 1 a worker joined (it signals when
    /// its share is done), 2 closed (the caller finished alone; a worker arriving late leaves).
    private let helper = Atomic<Int>(2)
    /// The next page to compress: each thread takes pages one at a time.
    private let nextPage = Atomic<Int>(0)
    private let compressed = DispatchSemaphore(value: 0)

    init(pageSize: Int, capacity: Int) {
        self.pageSize = pageSize
        self.capacity = capacity
        outputStride = LZ4.compressBound(pageSize)
        imageStride = pageSize + 192
        memory = PageBatch.allocateBuffer(byteCount: capacity * (imageStride + outputStride))
        slots = PageBatch.allocateSlots(capacity)
    }

    deinit { deallocateMemory() }

    /// Adds one page image: `encode` writes it into the buffer it is lent (`pageSize` bytes)
    /// and returns its length.
    func addImage(_ encode: (UnsafeMutableRawBufferPointer) -> Int) {
        let length = encode(imageBuffer(count))
        precondition(length > 0 && length <= pageSize, "a page image of \(length) bytes")
        setRawLength(count, length)
        count += 1
    }

    /// Opens the batch to a helper; its pages are all unclaimed.
    func open() {
        nextPage.store(0, ordering: .sequentiallyConsistent)
        helper.store(0, ordering: .sequentiallyConsistent)
    }

    /// A worker's arrival: whether it may help (the batch is open), after which it must
    /// ``signalCompressed()`` once its share is done.
    func join() -> Bool {
        helper.compareExchange(expected: 0, desired: 1, ordering: .sequentiallyConsistent).exchanged
    }

    /// The caller's last step: whether no worker joined (the batch is now closed to them);
    /// `false` means one did and the caller waits for its ``signalCompressed()``.
    func close() -> Bool {
        helper.compareExchange(expected: 0, desired: 2, ordering: .sequentiallyConsistent).exchanged
    }

    func signalCompressed() { compressed.signal() }
    func waitUntilCompressed() { compressed.wait() }

    /// Compresses pages no thread has taken yet, one at a time, until none is left.
    func compressUnclaimed() {
        while true {
            let i = nextPage.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue
            guard i < count else { return }
            compress(i)
        }
    }

    /// Compresses page `i` as ``LogWriter/append`` would: LZ4 when it saves at least 1/16, raw
    /// otherwise; then its stored payload's checksum.
    private func compress(_ i: Int) {
        let image = UnsafeRawBufferPointer(imageBuffer(i, length: slot(i).rawLength))
        if let stored = LZ4.compress(image, into: outputBuffer(i)) {
            setFrame(i, storedLength: stored, flags: Format.flagCompressed)
        } else {
            setFrame(i, storedLength: image.count, flags: 0)
        }
        setChecksum(i, CRC32C.checksum(storedPayload(i)))
    }

    func reset() { count = 0 }
}
