import Foundation
import StrataRecords

/// A cheap digest of the replicated tables, read from the store and from PostgreSQL, which
/// must be equal after a push: so a replicator that drops, doubles or garbles rows cannot post
/// a fast figure. Row counts per table, the sums of the items' amounts, quantities and list
/// keys (the to-ones), of the lists' derived counts and totals, of the links' key pairs, and
/// the token PostgreSQL holds against the store's last. Not every value: the root's tests
/// compare every row (`ReplicationTests`, `replicate-kill`).
struct ReplicaDigest: Equatable, CustomStringConvertible {
    var token: UInt64 = 0
    var lists = 0
    var listItemCounts = 0
    var listTotals = Decimal(0)
    var items = 0
    var amounts = Decimal(0)
    var quantities = 0
    var listKeys = 0
    var tags = 0
    var links = 0
    /// The sum of `source × 1,000,003 + target` over the links: a pair moved shows.
    var linkKeys = 0

    /// The fields by name, as printed and compared.
    var fields: [(name: String, value: String)] {
        [("token", "\(token)"), ("lists", "\(lists)"), ("sum(itemCount)", "\(listItemCounts)"),
         ("sum(total)", "\(listTotals)"), ("items", "\(items)"), ("sum(amount)", "\(amounts)"),
         ("sum(quantity)", "\(quantities)"), ("sum(list)", "\(listKeys)"), ("tags", "\(tags)"), ("links", "\(links)"),
         ("link keys", "\(linkKeys)")]
    }

    var description: String { fields.map { "\($0.name) \($0.value)" }.joined(separator: ", ") }

    /// `sum(amount) 12.5 ≠ 13.0, …`: the fields where `other` differs, or empty.
    func differences(from other: ReplicaDigest) -> String {
        zip(fields, other.fields).filter { $0.value != $1.value }
            .map { "\($0.name) \($1.value) ≠ \($0.value)" }.joined(separator: ", ")
    }

    static func linkKey(source: UInt64, target: UInt64) -> Int { Int(source) * 1_000_003 + Int(target) }
}

extension ReplicaDigest {
    /// What the store holds now.
    init(store: RecordStore) throws {
        self = try store.read { reader in
            var d = ReplicaDigest()
            d.token = try reader.lastHistoryToken().value
            for id in try reader.objects("TodoList") {
                guard let values = try reader.values(of: id) else { continue }
                d.lists += 1
                if case .int(let count)? = values["itemCount"] { d.listItemCounts += Int(count) }
                if case .decimal(let total)? = values["total"] { d.listTotals += total }
            }
            for id in try reader.objects("Item") {
                guard let values = try reader.values(of: id) else { continue }
                d.items += 1
                if case .decimal(let amount)? = values["amount"] { d.amounts += amount }
                if case .int(let quantity)? = values["quantity"] { d.quantities += Int(quantity) }
                d.listKeys += Int(try reader.target(of: "list", of: id)?.primaryKey ?? 0)
                for tag in try reader.members(of: "tags", of: id) {
                    d.links += 1
                    d.linkKeys += Self.linkKey(source: id.primaryKey, target: tag.primaryKey)
                }
            }
            d.tags = try reader.count("Tag")
            return d
        }
    }

    /// The query that reads the same from the replicated tables, as one row.
    static let query = """
        SELECT (SELECT token FROM strata_replication WHERE name = 'default'), \
        (SELECT count(*) FROM "TodoList"), (SELECT coalesce(sum("itemCount"), 0) FROM "TodoList"), \
        (SELECT coalesce(sum(total), 0) FROM "TodoList"), (SELECT count(*) FROM "Item"), \
        (SELECT coalesce(sum(amount), 0) FROM "Item"), (SELECT coalesce(sum(quantity), 0) FROM "Item"), \
        (SELECT coalesce(sum(list), 0) FROM "Item"), (SELECT count(*) FROM "Tag"), \
        (SELECT count(*) FROM "\(ReplicateModel.linkTable)"), \
        (SELECT coalesce(sum(source * 1000003 + target), 0) FROM "\(ReplicateModel.linkTable)")
        """

    /// What `database` holds now (with `psql`).
    init(database: String, in cluster: PostgresCluster) throws {
        let text = try cluster.psql(Self.query, database: database).trimmingCharacters(in: .whitespacesAndNewlines)
        let f = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        func int(_ i: Int) throws -> Int {
            guard let n = Int(f[i]) else { throw BenchError("\(database): '\(f[i])' in the digest is not an integer") }
            return n
        }
        func decimal(_ i: Int) throws -> Decimal {
            guard let d = Decimal(string: f[i]) else { throw BenchError("\(database): '\(f[i])' in the digest is not a number") }
            return d
        }
        guard f.count == 11 else { throw BenchError("\(database): the digest query printed '\(text)'") }
        self.init(token: UInt64(try int(0)), lists: try int(1), listItemCounts: try int(2), listTotals: try decimal(3),
                  items: try int(4), amounts: try decimal(5), quantities: try int(6), listKeys: try int(7), tags: try int(8),
                  links: try int(9), linkKeys: try int(10))
    }
}
