import Testing
@testable import StrataStorage

/// Pages compressed ahead (``PageCompressor``) come out as ``LogWriter/append`` would write
/// them, in the order they went in, whatever the batch size and whether a worker helps; a tree
/// built through it is the same file byte for byte.
@Suite struct PageCompressorTests {
    /// Random images (compressible, incompressible, short): each page's flags, stored payload
    /// and checksum are those of compressing it alone.
    @Test(arguments: [(1, false), (3, true), (7, false), (64, true), (256, true)])
    func pagesComeOutAsAppendWritesThem(batchSize: Int, concurrent: Bool) throws {
        let seed = UInt64(20_261_130 + batchSize)
        var rng = SeededRandom(seed: seed)
        let pageSize = 4096
        let images: [[UInt8]] = (0..<600).map { i in
            let length = 1 + Int(rng.next() % UInt64(pageSize))
            switch i % 3 {
            case 0: return randomBytes(length, &rng)
            case 1: return (0..<length).map { UInt8(($0 / 7) % 5) }
            default: return randomBytes(length / 2, &rng) + [UInt8](repeating: UInt8(i % 256), count: length - length / 2)
            }
        }
        let compressor = PageCompressor(pageSize: pageSize, batchSize: batchSize, concurrent: concurrent)
        var next = 0
        func check(_ batch: PageBatch) {
            for i in 0..<batch.count {
                let image = images[next]
                let slot = batch.slot(i)
                var expected = [UInt8](repeating: 0, count: LZ4.compressBound(pageSize))
                let compressedLength = image.withUnsafeBytes { source in
                    expected.withUnsafeMutableBytes { LZ4.compress(source, into: $0) }
                }
                let payload = compressedLength.map { Array(expected[..<$0]) } ?? image
                #expect(slot.rawLength == image.count, "seed \(seed): page \(next)")
                #expect(slot.flags == (compressedLength == nil ? 0 : Format.flagCompressed), "seed \(seed): page \(next)")
                #expect(Array(batch.storedPayload(i)) == payload, "seed \(seed): page \(next)")
                #expect(slot.checksum == CRC32C.checksum(payload), "seed \(seed): page \(next)")
                next += 1
            }
        }
        for image in images {
            if compressor.fillingIsFull {
                if let batch = compressor.takeInFlight() {
                    check(batch)
                    compressor.recycle(batch)
                }
                compressor.submitFilling()
            }
            compressor.add { buffer in
                image.withUnsafeBytes { buffer.copyMemory(from: $0) }
                return image.count
            }
        }
        if let batch = compressor.takeInFlight() {
            check(batch)
            compressor.recycle(batch)
        }
        if compressor.hasFilling {
            compressor.submitFilling()
            check(try #require(compressor.takeInFlight()))
        }
        #expect(next == images.count, "seed \(seed)")
    }

    /// Trees built entry by entry (``TreeBuilder``), overflow values among them, through
    /// compressors of different batch sizes, with and without a worker: the same bytes.
    @Test func aTreeIsTheSameFileWhateverCompressesIt() throws {
        let seed: UInt64 = 20_261_131
        var rng = SeededRandom(seed: seed)
        var entries: [([UInt8], [UInt8], Bool)] = []
        for i in 0..<30_000 {
            let overflow = i % 2_999 == 5
            let value = overflow ? randomBytes(9_000, &rng) : randomBytes(8, &rng) + [UInt8](repeating: UInt8(i % 7), count: 30)
            entries.append((key(i), value, overflow))
        }
        func build(batchSize: Int, concurrent: Bool) throws -> [UInt8] {
            let fs = SimulatedFileSystem()
            let file = try fs.open("/t", mode: .create)
            let log = LogWriter(file: file, path: "/t", end: Format.logStart, allocatedEnd: 0,
                                sync: SyncCoordinator(durableEnd: Format.logStart))
            let compressor = PageCompressor(pageSize: 4096, batchSize: batchSize, concurrent: concurrent)
            for part in [entries[..<10_000], entries[10_000...]] {
                let builder = TreeBuilder(log: log, pageSize: 4096, txid: 1, compressor: compressor)
                for (k, v, overflow) in part {
                    try k.withUnsafeBytes { keyBytes in
                        if overflow {
                            try builder.add(key: keyBytes, inlineValue: nil, overflow: v)
                        } else {
                            try v.withUnsafeBytes { try builder.add(key: keyBytes, inlineValue: $0, overflow: nil) }
                        }
                    }
                }
                _ = try builder.finish()
            }
            try log.syncAll()
            var bytes = [UInt8](repeating: 0, count: Int(log.end))
            _ = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
            return bytes
        }
        let reference = try build(batchSize: 1, concurrent: false)
        for (batchSize, concurrent) in [(5, false), (5, true), (256, true), (1_000, true)] {
            #expect(try build(batchSize: batchSize, concurrent: concurrent) == reference,
                    "seed \(seed): \(batchSize) pages a batch, concurrent \(concurrent)")
        }
    }
}
