
/// How big the objects benchmark is. The defaults: 100,000 items inserted in saves of 1,000 (into
/// 10 lists of 10,000, so one list is the 10,000-member to-many the traversal reads), 10,000
/// indexed queries, 10,000 objects changed, 10,000 merged, and 1,000,000 registered faults for the
/// memory figure, 10,000 observed objects of which a save changes 100.
struct ObjectsScale: Codable, Equatable, Sendable {
    var items = 100_000
    var itemsPerList = 10_000
    /// Items per save (insert), each save's items in one list.
    var batch = 1_000
    var queries = 10_000
    /// Queries per read transaction (as in `records`).
    var queryBatch = 100
    /// Lists whose members are read, one traversal each (every list by default).
    var traversals = 10
    var updates = 10_000
    var merges = 10_000
    var faults = 1_000_000
    /// Items with a key observer in `observe`, and how many of them the observed save changes.
    var observed = 10_000
    var observedChanges = 100
    /// Every value and every random choice derives from this.
    var seed: UInt64 = 0x0B1E_C750

    var lists: Int { (items + itemsPerList - 1) / itemsPerList }

    /// The sizes of `scale`: the defaults for both (decision 38). A run of every workload at
    /// these sizes stays short, and smaller stores would time the merge and observe workloads
    /// too briefly to measure; the default scale runs each workload once instead of three times.
    static func preset(_ scale: BenchScale) -> ObjectsScale {
        switch scale {
        case .default, .full: return ObjectsScale()
        }
    }
}

/// The objects benchmark's data, the same in every engine and child process: every value is a
/// function of an item's index and the seed. Item `j` (primary key `j + 1` in every engine)
/// belongs to list `j / itemsPerList`.
struct ObjectsData: Sendable {
    let scale: ObjectsScale

    private func mix(_ stream: UInt64, _ i: Int) -> UInt64 {
        var g = SplitMix64(seed: scale.seed ^ (stream &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(i))
        _ = g.next()
        return g.next()
    }

    func listName(_ i: Int) -> String { "List \(i)" }
    func list(ofItem j: Int) -> Int { j / scale.itemsPerList }
    func title(_ j: Int) -> String { "Item \(j) #\(mix(1, j) % 1_000_000)" }
    /// Unique per item, so an indexed equality query finds exactly one object.
    func sku(_ j: Int) -> String {
        let digits = String(j)
        return "SKU-" + String(repeating: "0", count: max(0, 9 - digits.count)) + digits
    }
    /// Cents, 1 … 99,999.
    func amount(_ j: Int) -> Int64 { Int64(mix(2, j) % 99_999) + 1 }
    func done(_ j: Int) -> Bool { mix(3, j) % 3 == 0 }

    /// SKUs of random items, for the indexed queries.
    func skuQueries() -> [String] {
        var g = SplitMix64(seed: scale.seed ^ 0x5C0E)
        return (0..<scale.queries).map { _ in sku(Int(g.next() % UInt64(scale.items))) }
    }

    /// `count` distinct random item indices in ascending order (the objects an update or a
    /// merge changes).
    func chosenItems(_ count: Int, stream: UInt64) -> [Int] {
        var all = Array(0..<scale.items)
        var g = SplitMix64(seed: scale.seed ^ stream)
        all.shuffle(using: &g)
        return all.prefix(min(count, scale.items)).sorted()
    }

    /// The amount an update or merge gives item `j`.
    func changedAmount(_ j: Int) -> Int64 { amount(j) + 1_000_000 }
}

/// Seeds (xored into the scale's) of the objects benchmark's random streams.
enum ObjectsSeeds {
    static let updates: UInt64 = 0x0B1E_0001
    static let merges: UInt64 = 0x0B1E_0002
    static let observed: UInt64 = 0x0B1E_0003
    static let observedChanges: UInt64 = 0x0B1E_0004
}

/// What an engine read, summed so that any order of reading gives the same figure: engines
/// must agree on it (a benchmark whose engines read different data measures nothing).
struct ObjectsDigest: Codable, Equatable, Sendable, CustomStringConvertible {
    /// Objects read (or, for a store digest, items in the store).
    var objects = 0
    /// Lists in the store (store digests only).
    var lists = 0
    /// Σ of a hash of what was read from each object.
    var checksum: UInt64 = 0

    var description: String { "objects \(objects), lists \(lists), checksum \(String(checksum, radix: 16))" }

    /// Adds one item's title, amount and done flag (any of them may be left out as nil).
    @inline(__always)
    mutating func add(title: String? = nil, amount: Int64? = nil, done: Bool? = nil, list: Int64? = nil) {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        if let title {
            for b in title.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
        }
        if let amount { h = (h ^ UInt64(bitPattern: amount)) &* 0x9E37_79B9_7F4A_7C15 }
        if let done { h = (h ^ (done ? 0xD0 : 0x0D)) &* 0x100_0000_01B3 }
        if let list { h = (h ^ UInt64(bitPattern: list) << 20) &* 0x9E37_79B9_7F4A_7C15 }
        checksum &+= h ^ (h >> 29)
        objects += 1
    }
}
