import Foundation
import StrataRecords
import StrataStorage

/// The app the `replicate` benchmark plays: it opens the store (history on, shared, so
/// `strata replicate` can read it from its own process while this one writes), fills it, and
/// commits small transactions drawn from a seeded generator, so every run writes the same.
final class ReplicateWriter {
    let store: RecordStore
    private var rng: SplitMix64
    private var lists: [ObjectID] = []
    private var tags: [ObjectID] = []
    /// The items that exist, in no order: a delete swaps the last one into its place.
    private var items: [ObjectID] = []
    private var titles = 0
    private let newList, newTag, newItem, changeItem, moveItem: PreparedWrite

    /// What one transaction does, in percent of transactions: inserts, amount changes and moves
    /// of 1–4 items, tag toggles of 1–2 items, a delete; the report's note quotes it.
    static let mix = "40% insert 1–4 items into a list (30% of them tagged), 25% change the amount and quantity of "
        + "1–4 items, 20% move 1–4 items to another list, 10% tag or untag 1–2 items, 5% delete an item; items picked "
        + "at random among all, so the rows a batch writes are mostly distinct"

    /// Opens (creates) the store at `path`.
    init(path: String, seed: UInt64) throws {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        store = try RecordStore(path: path, model: try ReplicateModel.model(), options: options, history: .on)
        rng = SplitMix64(seed: seed)
        newList = try store.prepareWrite("TodoList", properties: ["name"])
        newTag = try store.prepareWrite("Tag", properties: ["label"])
        newItem = try store.prepareWrite("Item", properties: ["title", "amount", "quantity", "list"])
        changeItem = try store.prepareWrite("Item", properties: ["amount", "quantity"])
        moveItem = try store.prepareWrite("Item", properties: ["list"])
    }

    func close() throws { try store.close() }

    /// Fills the empty store: `scale.lists` lists, `scale.tags` tags, `scale.items` items on
    /// random lists with 0–2 tags each, in transactions of 1,000 rows (what the first push
    /// copies; their size does not matter to it).
    func populate(_ scale: ReplicateScale) throws {
        for start in stride(from: 0, to: scale.lists, by: 1_000) {
            lists += try store.write { tx in
                try (start..<min(scale.lists, start + 1_000)).map { try tx.insert(newList, [.string("List \($0)")]) }
            }
        }
        tags = try store.write { tx in try (0..<scale.tags).map { try tx.insert(newTag, [.string("Tag \($0)")]) } }
        for start in stride(from: 0, to: scale.items, by: 1_000) {
            try store.write { tx in
                for _ in start..<min(scale.items, start + 1_000) {
                    let item = try insertItem(tx, into: lists[draw(lists.count)])
                    var linked = Set<Int>()
                    for _ in 0..<draw(3) {
                        let tag = draw(tags.count)
                        if linked.insert(tag).inserted { try tx.add(tags[tag], to: "tags", of: item) }
                    }
                }
            }
        }
    }

    /// The list whose name ``commitOne(stamp:)`` sets.
    var stampedList: ObjectID { lists[0] }

    /// Commits one app-like transaction (``mix``); with `stamp`, the same transaction also
    /// renames the first list to it (how `converge` sees the commit arrive in another store).
    func commitOne(stamp: String? = nil) throws {
        try store.write { tx in
            if let stamp { try tx.update(lists[0], ["name": stamp]) }
            switch draw(100) {
            case 0..<40:
                let list = lists[draw(lists.count)]
                for _ in 0...draw(4) {
                    let item = try insertItem(tx, into: list)
                    if draw(10) < 3 { try tx.add(tags[draw(tags.count)], to: "tags", of: item) }
                }
            case 40..<65:
                for _ in 0...draw(4) { try tx.update(items[draw(items.count)], changeItem, [amount(), quantity()]) }
            case 65..<85:
                let list = lists[draw(lists.count)]
                for _ in 0...draw(4) { try tx.update(items[draw(items.count)], moveItem, [list.strataValue]) }
            case 85..<95:
                for _ in 0...draw(2) {
                    let item = items[draw(items.count)], tag = tags[draw(tags.count)]
                    if try tx.members(of: "tags", of: item).contains(tag) {
                        try tx.remove(tag, from: "tags", of: item)
                    } else {
                        try tx.add(tag, to: "tags", of: item)
                    }
                }
            default:
                // Never the last few items: the other kinds need some to pick from.
                guard items.count > 100 else { return }
                let index = draw(items.count)
                try tx.delete(items[index])
                items.swapAt(index, items.count - 1)
                items.removeLast()
            }
        }
    }

    private func insertItem(_ tx: RecordTransaction, into list: ObjectID) throws -> ObjectID {
        titles += 1
        let item = try tx.insert(newItem, [.string("Item \(titles)"), amount(), quantity(), list.strataValue])
        items.append(item)
        return item
    }

    /// An amount in cents, below 1,000.00.
    private func amount() -> StoredValue {
        .decimal(Decimal(sign: .plus, exponent: -2, significand: Decimal(draw(100_000))))
    }

    private func quantity() -> StoredValue { .int(Int64(1 + draw(9))) }

    /// Uniform in `0..<n`.
    private func draw(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
}
