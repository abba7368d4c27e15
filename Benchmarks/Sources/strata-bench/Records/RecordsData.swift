import StrataRecords
import StrataStorage

/// How big the records benchmark is. The defaults: 1,000 lists × 1,000 items, 10,000 inserts into
/// lists of 10, 1,000 and 100,000 items, 10,000 moves, 100 renames of lists with 10,000 items,
/// 10,000 queries of each kind, 100 operations per transaction.
struct RecordsScale: Codable, Equatable, Sendable {
    var lists = 1_000
    var itemsPerList = 1_000
    var listSizes = [10, 1_000, 100_000]
    /// Items inserted by each `insert_list<N>` workload.
    var inserts = 10_000
    /// Items that the `insert_list<N>` setup spreads over lists of N (at least one list).
    var setupItems = 100_000
    var moves = 10_000
    var renames = 100
    var fanoutLists = 100
    var fanoutItems = 10_000
    var queries = 10_000
    /// Notes of the text workloads, their searches and their updates.
    var notes = 100_000
    var textQueries = 10_000
    var textUpdates = 10_000
    var batch = 100
    /// `sqlite-recount`'s `insert_list<N>` for N ≥ ``windowFromListSize`` runs for this many
    /// seconds instead of `inserts` operations (0: a fixed count, as before windows existed).
    var recountWindow = 30.0
    var windowFromListSize = 100_000

    var bulkItems: Int { lists * itemsPerList }

    /// `make bench`'s sizes: every workload and engine, in a short run (decision 38). The list
    /// sizes stay (lists of 100,000 are the point of `insert_list<N>`) and so do the inserts
    /// into them; the bulk store is a tenth (sqlite-recount's bulk insert is quadratic in the
    /// list size: a fifth of the lists' size, a twentieth of the time), and fewer moves and renames.
    static let `default` = RecordsScale(lists: 200, itemsPerList: 500, moves: 5_000, renames: 20, fanoutLists: 20,
                                        notes: 20_000, textQueries: 5_000, textUpdates: 5_000, recountWindow: 5)

    /// The sizes of `scale` (`full` keeps the defaults, as before scales existed).
    static func preset(_ scale: BenchScale) -> RecordsScale {
        switch scale {
        case .default: return .default
        case .full: return RecordsScale()
        }
    }

    /// Whether `engine` runs `workload` for a time window rather than a fixed count.
    func isWindowed(_ engine: RecordsEngineName, _ workload: RecordsWorkload) -> Bool {
        guard engine == .sqliteRecount, recountWindow > 0, case .insertIntoList(let size) = workload else { return false }
        return size >= windowFromListSize
    }
}

/// Where an item goes: its index (primary key − 1) and its list's index.
struct Placement: Sendable {
    var item: Int32
    var list: Int32
}

/// The records benchmark's data, the same in every engine and child process: every value is a
/// function of an index and a fixed seed.
///
/// List names are two words and a number, half of the words with diacritics or characters
/// that case-fold to more than one (`Straße`), so `canonical:` has real work and prefix
/// queries (`"CAF"`, `"çäf"`, `"stR"`) only match through folding.
enum RecordsData {
    static let firstWords = ["Café", "Crème", "Über", "Straße", "Naïve", "Résumé", "Smörgås", "Ångström", "Jalapeño",
                             "Piñata", "Façade", "Fiancée", "Garçon", "Zoë", "Öl", "Éclair", "Brûlée", "Ærø",
                             "Home", "Work", "Garden", "Errands", "Books", "Travel", "Music", "Kitchen", "Office",
                             "Holiday", "Groceries", "Projects"]
    static let secondWords = ["list", "Plan", "ideas", "TODO", "Woche", "été", "año", "notes", "später", "next"]

    static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var g = SplitMix64(seed: a &* 0x9E37_79B9_7F4A_7C15 ^ b)
        return g.next()
    }

    static func listName(_ i: Int) -> String {
        let h = mix(0x4C15_7000, UInt64(i))
        return "\(firstWords[Int(h % UInt64(firstWords.count))]) \(secondWords[Int((h >> 32) % UInt64(secondWords.count))]) \(i)"
    }

    static func title(_ j: Int) -> String { "item \(j)" }

    /// Stock-keeping codes are unique per item: `fetchindexed` finds exactly one.
    static func sku(_ j: Int) -> String {
        let digits = String(j)
        return "SKU-" + String(repeating: "0", count: max(0, 9 - digits.count)) + digits
    }

    /// 0.01 … 999.99, in cents.
    static func amountCents(_ j: Int) -> Int64 { Int64(mix(0xA0_0000, UInt64(j)) % 99_999) + 1 }

    /// `count` items, `perList` to each of `lists` lists, in a shuffled order (so consecutive
    /// inserts land in different lists, as items arrive in an app), item indices from `first`.
    static func shuffledPlacements(lists: Int, perList: Int, firstItem: Int = 0, seed: UInt64) -> [Placement] {
        var order = (0..<(lists * perList)).map { Int32($0 / perList) }
        var g = SplitMix64(seed: seed)
        order.shuffle(using: &g)
        return order.enumerated().map { Placement(item: Int32(firstItem + $0.offset), list: $0.element) }
    }

    /// `count` moves of random items (of `items`) to a random other list, given where the items
    /// start; the placements are updated as the moves happen.
    static func moves(_ count: Int, placements: inout [Placement], lists: Int, seed: UInt64) -> [Placement] {
        var g = SplitMix64(seed: seed)
        var out: [Placement] = []
        out.reserveCapacity(count)
        var listOf = [Int32](repeating: 0, count: placements.count)
        for p in placements { listOf[Int(p.item)] = p.list }
        for _ in 0..<count {
            let item = Int(g.next() % UInt64(listOf.count))
            var to = Int32(g.next() % UInt64(lists))
            if to == listOf[item] { to = (to + 1) % Int32(lists) }
            listOf[item] = to
            out.append(Placement(item: Int32(item), list: to))
        }
        return out
    }

    /// Case- and diacritic-varied 3-letter prefixes of list names: each folds (`canonical:`) to
    /// the first three characters of some list's folded name.
    static func prefixQueries(_ count: Int, lists: Int, seed: UInt64) -> [String] {
        let accents: [Character: [Character]] = ["a": ["á", "à", "ä", "â"], "e": ["é", "è", "ê", "ë"], "i": ["í", "ï"],
                                                 "o": ["ó", "ö", "ô"], "u": ["ú", "ü", "û"], "c": ["ç"], "n": ["ñ"]]
        var g = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let folded = TextFolding.canonical(listName(Int(g.next() % UInt64(lists))))
            return String(folded.prefix(3).map { c -> String in
                var c = c
                if let variants = accents[c], g.next() % 3 == 0 { c = variants[Int(g.next() % UInt64(variants.count))] }
                return g.next() % 2 == 0 ? String(c).uppercased() : String(c)
            }.joined())
        }
    }

    /// SKUs of random items among the first `items`.
    static func skuQueries(_ count: Int, items: Int, seed: UInt64) -> [String] {
        var g = SplitMix64(seed: seed)
        return (0..<count).map { _ in sku(Int(g.next() % UInt64(items))) }
    }
}

/// Seeds of the records benchmark's random streams.
enum RecordsSeeds {
    static let bulkOrder: UInt64 = 0x2EC0_0001
    static let sizedOrder: UInt64 = 0x2EC0_0002
    static let moves: UInt64 = 0x2EC0_0003
    static let prefixes: UInt64 = 0x2EC0_0004
    static let skus: UInt64 = 0x2EC0_0005
    static let fanout: UInt64 = 0x2EC0_0006
    static let textQueries: UInt64 = 0x2EC0_0007
    static let textUpdates: UInt64 = 0x2EC0_0008
}

/// What an engine's store holds, summed: equal across engines when every engine computed the
/// same derived values (the benchmark compares them, so a fast wrong answer cannot win).
struct RecordsDigest: Codable, Equatable, Sendable, CustomStringConvertible {
    var lists = 0
    var items = 0
    /// Σ itemCount over lists.
    var itemCountSum = 0
    /// Σ total over lists, in cents.
    var totalCents: Int64 = 0
    /// Items whose listName equals their list's name (every item with a list, when copies are right).
    var copiesRight = 0
    /// Lists whose searchName is the canonical form of their name.
    var searchNamesRight = 0
    /// Query workloads: results found.
    var hits = 0
    /// Notes, and Σ over ``TextData/probeWords`` of the notes holding each.
    var notes = 0
    var notesFound = 0

    /// What a store holds after the `insert_list<N>` setup and inserts: `items` items (indices
    /// 0..<items) spread over `lists` lists, with every derived value right.
    static func expected(lists: Int, items: Int) -> RecordsDigest {
        var d = RecordsDigest(lists: lists, items: items, itemCountSum: items, copiesRight: items, searchNamesRight: lists)
        for j in 0..<items { d.totalCents += RecordsData.amountCents(j) }
        return d
    }

    var description: String {
        "lists \(lists), items \(items), Σ itemCount \(itemCountSum), Σ total \(totalCents) cents, "
            + "copies right \(copiesRight), searchNames right \(searchNamesRight), hits \(hits), "
            + "notes \(notes) (Σ found by probe words: \(notesFound))"
    }
}
