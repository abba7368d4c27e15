import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Several stores and a server application writing one dataset, against a model of the
/// protocol: the same random history (store writes, exchanges in random order, server writes)
/// run through real stores and PostgreSQL, and through a small in-memory oracle of the rules
/// alone (decisions 110 and 111) — an exchange applies the store's changes since its last one
/// over the dataset property by property (a deletion wins over changes, a change of a row
/// deleted elsewhere is lost), then every unique value two rows hold goes to the smaller key
/// and rows missing a required value go; the store then holds the dataset. After every
/// exchange the store must equal the oracle's dataset, and at the end every store and
/// PostgreSQL must.
@Suite(.serialized) struct ConvergenceOracleTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-oracle-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    static func model() throws -> Model {
        try Model {
            Entity("Tag") {
                AttributeDescription("label", .string)
                AttributeDescription("score", .int64, default: 0)
                Unique("label")
            }
            Entity("Note") {
                AttributeDescription("title", .string)
                AttributeDescription("score", .int64, default: 0)
            }
        }
    }

    /// The oracle: the dataset, and each store's changes since its last exchange.
    struct Oracle {
        typealias Row = [String: StoredValue]
        enum Pending { case inserted(Row), updated(Row), deleted }
        var dataset: [ObjectID: Row] = [:]
        var pending: [[ObjectID: Pending]]

        init(stores: Int) { pending = Array(repeating: [:], count: stores) }

        mutating func insert(_ id: ObjectID, _ row: Row, by store: Int) { pending[store][id] = .inserted(row) }

        mutating func update(_ id: ObjectID, _ values: Row, by store: Int) {
            switch pending[store][id] {
            case .inserted(var row)?:
                row.merge(values) { $1 }
                pending[store][id] = .inserted(row)
            case .updated(var row)?:
                row.merge(values) { $1 }
                pending[store][id] = .updated(row)
            case .deleted?:
                break
            case nil:
                pending[store][id] = .updated(values)
            }
        }

        mutating func delete(_ id: ObjectID, by store: Int) {
            if case .inserted? = pending[store][id] {
                pending[store][id] = nil
            } else {
                pending[store][id] = .deleted
            }
        }

        /// A store's exchange: its changes over the dataset, then the model's rules.
        mutating func exchange(_ store: Int) {
            for (id, change) in pending[store] {
                switch change {
                case .inserted(let row): dataset[id] = row
                case .updated(let values): if dataset[id] != nil { dataset[id]!.merge(values) { $1 } }
                case .deleted: dataset[id] = nil
                }
            }
            pending[store] = [:]
            settle()
        }

        /// The rules a pull applies to what it brings: required values, then unique labels.
        mutating func settle() {
            for (id, row) in dataset where row[id.entity == "Tag" ? "label" : "title"] == .null {
                dataset[id] = nil
            }
            var owner: [StoredValue: ObjectID] = [:]
            for id in dataset.keys.filter({ $0.entity == "Tag" }).sorted(by: { $0.primaryKey < $1.primaryKey }) {
                let label = dataset[id]!["label"]!
                if owner[label] != nil {
                    dataset[id] = nil
                } else {
                    owner[label] = id
                }
            }
        }
    }

    static func content(_ store: RecordStore) throws -> [ObjectID: Oracle.Row] {
        try store.read { reader in
            var out: [ObjectID: Oracle.Row] = [:]
            for entity in ["Tag", "Note"] {
                for id in try reader.objects(entity) {
                    let values = try reader.values(of: id) ?? [:]
                    let name = entity == "Tag" ? "label" : "title"
                    out[id] = [name: values[name] ?? .null, "score": values["score"] ?? .null]
                }
            }
            return out
        }
    }

    func contentOfDatabase(_ database: String) throws -> [ObjectID: Oracle.Row] {
        var out: [ObjectID: Oracle.Row] = [:]
        for (entity, name) in [("Tag", "label"), ("Note", "title")] {
            let text = try cluster.psql("SELECT pk, \(name), score FROM \"\(entity)\"", database: database)
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: "|", omittingEmptySubsequences: false)
                guard fields.count == 3, let pk = UInt64(fields[0]), let score = Int64(fields[2]) else { continue }
                out[ObjectID(entity: entity, primaryKey: pk)] = [name: .string(String(fields[1])), "score": .int(score)]
            }
        }
        return out
    }

    enum Write {
        case insert(ObjectID, Oracle.Row)
        case update(ObjectID, Oracle.Row)
        case delete(ObjectID)
    }

    /// One store transaction of one to three random writes, as committed.
    static func transaction(on store: RecordStore, labels: Int, random: inout SplitMix64) throws -> [Write] {
        var rng = random
        let writes = try store.write { tx -> [Write] in
            var writes: [Write] = []
            for _ in 0..<(1 + rng.below(3)) {
                let rows = try tx.objects("Tag") + tx.objects("Note")
                switch rng.below(6) {
                case 0:
                    let row: Oracle.Row = ["label": .string("l\(rng.below(labels))"), "score": .int(Int64(rng.below(100)))]
                    writes.append(.insert(try tx.insert("Tag", row), row))
                case 1:
                    let row: Oracle.Row = ["title": .string("n\(rng.below(1000))"), "score": .int(Int64(rng.below(100)))]
                    writes.append(.insert(try tx.insert("Note", row), row))
                case 2, 3:
                    guard !rows.isEmpty else { continue }
                    let id = rows[rng.below(rows.count)]
                    let values: Oracle.Row = rng.below(2) == 0 ? ["score": .int(Int64(rng.below(100)))]
                        : id.entity == "Tag" ? ["label": .string("l\(rng.below(labels))")]
                        : ["title": .string("n\(rng.below(1000))")]
                    try tx.update(id, values)
                    writes.append(.update(id, values))
                default:
                    guard !rows.isEmpty else { continue }
                    let id = rows[rng.below(rows.count)]
                    try tx.delete(id)
                    writes.append(.delete(id))
                }
            }
            return writes
        }
        random = rng
        return writes
    }

    @Test(arguments: [UInt64(21), 22, 23])
    func storesEndAsTheOracleSays(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let (database, url) = try cluster.makeDatabase()
        let model = try Self.model()
        let count = 3
        var stores: [RecordStore] = []
        var replicators: [PostgresReplicator] = []
        defer { for store in stores { try? store.close() } }
        for k in 0..<count {
            var options = StoreOptions(durability: .normal)
            options.sharing = .shared
            let store = try RecordStore(path: directory + "/oracle-\(seed)-\(k).strata", model: model, options: options, history: .on)
            stores.append(store)
            let replicator = PostgresReplicator(
                store: store, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]),
                name: "s\(k)")
            replicators.append(replicator)
            _ = try await replicator.exchange()
        }
        var oracle = Oracle(stores: count)
        var refusals = 0
        let labels = 6
        func check(_ k: Int, _ step: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let held = try Self.content(stores[k])
            if held != oracle.dataset {
                let extra = held.filter { oracle.dataset[$0.key] != $0.value }.prefix(4)
                let missing = oracle.dataset.filter { held[$0.key] != $0.value }.prefix(4)
                Issue.record("seed \(seed), step \(step), s\(k): the store holds \(Array(extra)), the oracle \(Array(missing))",
                             sourceLocation: sourceLocation)
            }
        }
        for step in 0..<120 {
            let k = random.below(count)
            switch random.below(10) {
            case 0..<5:
                // A store's transaction of one to three writes.
                do {
                    for write in try Self.transaction(on: stores[k], labels: labels, random: &random) {
                        switch write {
                        case .insert(let id, let row): oracle.insert(id, row, by: k)
                        case .update(let id, let values): oracle.update(id, values, by: k)
                        case .delete(let id): oracle.delete(id, by: k)
                        }
                    }
                } catch StrataError.conflict {
                    // A label the store already holds: the transaction is refused, as the
                    // oracle never saw it.
                }
            case 5..<8:
                let (pulled, _) = try await replicators[k].exchange()
                refusals += pulled.refusals.count
                oracle.exchange(k)
                try check(k, step)
            default:
                // The server application: an insert (a label another row may hold, or a note
                // without its title), a change or a deletion, of any row.
                let rows = oracle.dataset.keys.sorted { ($0.entity, $0.primaryKey) < ($1.entity, $1.primaryKey) }
                switch random.below(5) {
                case 0:
                    let label = "l\(random.below(labels))", score = Int64(random.below(100))
                    let pk = try cluster.psql("INSERT INTO \"Tag\" (label, score) VALUES ('\(label)', \(score)) RETURNING pk",
                                              database: database).split(separator: "\n").first.map(String.init) ?? ""
                    oracle.dataset[ObjectID(entity: "Tag", primaryKey: try #require(UInt64(pk)))] = ["label": .string(label), "score": .int(score)]
                case 1:
                    let title: StoredValue = random.below(4) == 0 ? .null : .string("server \(step)")
                    let sqlTitle = title == .null ? "NULL" : "'server \(step)'"
                    let pk = try cluster.psql("INSERT INTO \"Note\" (title, score) VALUES (\(sqlTitle), 5) RETURNING pk",
                                              database: database).split(separator: "\n").first.map(String.init) ?? ""
                    oracle.dataset[ObjectID(entity: "Note", primaryKey: try #require(UInt64(pk)))] = ["title": title, "score": .int(5)]
                case 2, 3:
                    guard !rows.isEmpty else { continue }
                    let id = rows[random.below(rows.count)]
                    let score = Int64(random.below(100))
                    _ = try cluster.psql("UPDATE \"\(id.entity)\" SET score = \(score) WHERE pk = \(id.primaryKey)", database: database)
                    oracle.dataset[id]!["score"] = .int(score)
                default:
                    guard !rows.isEmpty else { continue }
                    let id = rows[random.below(rows.count)]
                    _ = try cluster.psql("DELETE FROM \"\(id.entity)\" WHERE pk = \(id.primaryKey)", database: database)
                    oracle.dataset[id] = nil
                }
            }
        }
        // Quiet: every store exchanges, twice round.
        for _ in 0..<2 {
            for k in 0..<count {
                let (pulled, _) = try await replicators[k].exchange()
                refusals += pulled.refusals.count
                oracle.exchange(k)
            }
        }
        for k in 0..<count { try check(k, -1) }
        #expect(try contentOfDatabase(database) == oracle.dataset, "seed \(seed): PostgreSQL")
        #expect(refusals > 0, "seed \(seed): the history made no duplicate or invalid row")
        #expect(try cluster.psql("SELECT count(*) FROM strata_changes", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
