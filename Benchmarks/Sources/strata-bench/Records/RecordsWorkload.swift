import Foundation

/// The workloads of `strata-bench records`, by the names the report and its JSON give them.
enum RecordsWorkload: Hashable, Sendable {
    /// `lists × itemsPerList` items (and their lists) inserted, items in shuffled list order.
    case bulkInsert
    /// Items inserted into lists that already hold `size` items (cost per insert at that size),
    /// each transaction's items into one list.
    case insertIntoList(size: Int)
    /// Items moved between random lists of the bulk store.
    case moveItems
    /// Lists with `fanoutItems` items renamed, one rename per transaction.
    case renameFanout
    /// Case- and diacritic-insensitive 3-letter prefix queries on `searchName`.
    case prefixSearch
    /// Equality fetches of items by their indexed `sku`.
    case fetchIndexed
    /// One transaction setting the amount of every item under 100.00 (a tenth of them) by
    /// predicate: `updateAll` against SQLite's `UPDATE … WHERE`.
    case batchUpdate
    /// One transaction deleting every item under 100.00 by predicate: `deleteAll` against
    /// SQLite's `DELETE … WHERE`.
    case batchDelete
    /// Notes inserted into an empty store, each indexed word by word (Strata's word index,
    /// SQLite's FTS5), `batch` per transaction.
    case textIndex
    /// Ranked word searches (the best 20) on a store of notes.
    case textSearch
    /// Word conditions in fetches, unranked, every match: Strata's `title CONTAINSWORDS $q`
    /// (planned onto the word index over title and body, the titles then checked) against
    /// FTS5's `ZTITLE MATCH ?`.
    case textFilter
    /// Note bodies rewritten, `batch` per transaction: the word index follows.
    case textUpdate

    static func all(_ scale: RecordsScale) -> [RecordsWorkload] {
        [.bulkInsert] + scale.listSizes.map { .insertIntoList(size: $0) } + [.moveItems, .renameFanout, .prefixSearch, .fetchIndexed, .batchUpdate, .batchDelete,
                                                                      .textIndex, .textSearch, .textFilter, .textUpdate]
    }

    var name: String {
        switch self {
        case .bulkInsert: return "bulkinsert"
        case .insertIntoList(let size): return "insert_list\(size)"
        case .moveItems: return "moveitems"
        case .renameFanout: return "renamefanout"
        case .prefixSearch: return "prefixsearch"
        case .fetchIndexed: return "fetchindexed"
        case .batchUpdate: return "batchupdate"
        case .batchDelete: return "batchdelete"
        case .textIndex: return "textindex"
        case .textSearch: return "textsearch"
        case .textFilter: return "textfilter"
        case .textUpdate: return "textupdate"
        }
    }

    init?(name: String) {
        switch name {
        case "bulkinsert": self = .bulkInsert
        case "moveitems": self = .moveItems
        case "renamefanout": self = .renameFanout
        case "prefixsearch": self = .prefixSearch
        case "fetchindexed": self = .fetchIndexed
        case "batchupdate": self = .batchUpdate
        case "batchdelete": self = .batchDelete
        case "textindex": self = .textIndex
        case "textsearch": self = .textSearch
        case "textfilter": self = .textFilter
        case "textupdate": self = .textUpdate
        default:
            guard name.hasPrefix("insert_list"), let size = Int(name.dropFirst("insert_list".count)), size > 0 else { return nil }
            self = .insertIntoList(size: size)
        }
    }

    /// Workloads that leave a store of their own (measured and checked after close).
    var leavesStore: Bool { self != .prefixSearch && self != .fetchIndexed && self != .textSearch
        && self != .textFilter }
}

extension RecordsWorkload: BenchWorkload {
    /// Workloads that start from the store `bulkinsert` leaves.
    var needsStore: Bool {
        self == .moveItems || self == .prefixSearch || self == .fetchIndexed || self == .batchUpdate || self == .batchDelete
    }
}
