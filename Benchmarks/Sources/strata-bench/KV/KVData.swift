import StrataStorage

/// The benchmark needs the same keys, values and orders on every run and in every child
/// process, so it draws from the engine's seeded SplitMix64, never from system randomness.
extension SplitMix64 {
    /// A value in `0..<bound`, by multiply-high (Lemire); the tiny bias is irrelevant here.
    mutating func next(below bound: Int) -> Int {
        Int((UInt64(bound).multipliedFullWidth(by: next())).high)
    }
}

/// Seeds for the different random streams, fixed so every run and every engine sees the same
/// sequences.
enum KVSeeds {
    static let values: UInt64 = 301            // db_bench's RandomGenerator seed
    static let fillOrder: UInt64 = 0x5EED_0001
    static let readKeys: UInt64 = 0x5EED_0002
    static let deleteKeys: UInt64 = 0x5EED_0003
    static let syncKeys: UInt64 = 0x5EED_0004
}

/// The benchmark's keys and values, laid out flat so that handing one to an engine costs no
/// allocation: every engine gets the same borrowed bytes and the timing measures the engine,
/// not the harness.
///
/// Made as LevelDB's `db_bench` makes them: key `i` is `i` in decimal, zero-padded to 16 bytes
/// ("%016d"); values are successive 100-byte slices of a 1 MiB buffer of pieces that compress to
/// about half (`--compression_ratio=0.5`).
final class KVData {
    static let keySize = 16
    static let valueSize = 100

    let count: Int
    /// `count` keys of `keySize` bytes each, back to back.
    private let keys: UnsafeMutableRawBufferPointer
    /// db_bench's RandomGenerator buffer.
    private let values: UnsafeMutableRawBufferPointer
    /// How many whole values the buffer holds before the generator wraps around.
    private let valueSlots: Int

    init(count: Int) {
        self.count = count
        keys = .allocate(byteCount: max(1, count * Self.keySize), alignment: 16)
        for i in 0..<count { Self.formatKey(i, into: keys.baseAddress! + i * Self.keySize) }

        // db_bench: `while (data_.size() < 1048576) data_.append(CompressibleString(rnd, 0.5, 100))`,
        // where a compressible string is 50 random printable bytes (' ' + Uniform(95)) repeated
        // to fill 100 bytes.
        let pieceRaw = Self.valueSize / 2
        let pieces = (1_048_576 + Self.valueSize - 1) / Self.valueSize
        values = .allocate(byteCount: pieces * Self.valueSize, alignment: 16)
        var rng = SplitMix64(seed: KVSeeds.values)
        for p in 0..<pieces {
            let base = p * Self.valueSize
            for j in 0..<pieceRaw { values[base + j] = UInt8(32 + rng.next(below: 95)) }
            for j in pieceRaw..<Self.valueSize { values[base + j] = values[base + j - pieceRaw] }
        }
        // Values are 100 bytes and the buffer a whole number of them, so db_bench's
        // "wrap when pos + len > size" wraps exactly every `pieces` values.
        valueSlots = pieces
    }

    deinit {
        keys.deallocate()
        values.deallocate()
    }

    /// Writes `"%016d"` of `index` without Foundation (and without allocating).
    private static func formatKey(_ index: Int, into p: UnsafeMutableRawPointer) {
        var v = index
        for pos in stride(from: keySize - 1, through: 0, by: -1) {
            p.storeBytes(of: UInt8(48 + v % 10), toByteOffset: pos, as: UInt8.self)
            v /= 10
        }
    }

    /// The key of record `index`, borrowed for the life of this object.
    @inline(__always)
    func key(_ index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: keys.baseAddress! + index * Self.keySize, count: Self.keySize)
    }

    /// The value written by the `op`-th put of a fill: like db_bench, values follow the order of
    /// operations, not the keys.
    @inline(__always)
    func value(op: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: values.baseAddress! + (op % valueSlots) * Self.valueSize,
                               count: Self.valueSize)
    }

    /// `0..<count` in ascending order.
    func sequentialOrder() -> [UInt32] { (0..<count).map { UInt32($0) } }

    /// A seeded Fisher–Yates shuffle of `0..<count`.
    func shuffledOrder(seed: UInt64) -> [UInt32] {
        var order = sequentialOrder()
        var rng = SplitMix64(seed: seed)
        var i = order.count - 1
        while i > 0 {
            order.swapAt(i, rng.next(below: i + 1))
            i -= 1
        }
        return order
    }

    /// `n` uniformly random indices (with repeats), as db_bench's readrandom draws them.
    func randomIndices(_ n: Int, seed: UInt64) -> [UInt32] {
        var rng = SplitMix64(seed: seed)
        return (0..<n).map { _ in UInt32(rng.next(below: count)) }
    }
}
