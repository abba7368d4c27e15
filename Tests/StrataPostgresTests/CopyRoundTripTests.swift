import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Every attribute type through the first copy's `COPY` text (decision 111) and through the
/// statements of later pushes, read back by a store that joins the dataset (binary reads):
/// the values must come back as the store wrote them — the text format's escapes (tabs,
/// newlines, backslashes, `\N` as text), extreme integers, doubles that need all 17 digits,
/// 38-digit decimals, dates before 1970 and before year 1, bytes that are backslashes.
@Suite(.serialized) struct CopyRoundTripTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-copy-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    static func model() throws -> Model {
        try Model {
            Entity("Sample") {
                AttributeDescription("flag", .bool, optional: true)
                AttributeDescription("small", .int16, optional: true)
                AttributeDescription("medium", .int32, optional: true)
                AttributeDescription("large", .int64, optional: true)
                AttributeDescription("real", .double, optional: true)
                AttributeDescription("exact", .decimal, optional: true)
                AttributeDescription("text", .string, optional: true)
                AttributeDescription("when", .date, optional: true)
                AttributeDescription("id", .uuid, optional: true)
                AttributeDescription("bytes", .binary, optional: true)
                RelationshipDescription("next", toOne: "Sample", inverse: "previous")
                RelationshipDescription("previous", toMany: "Sample", inverse: "next")
            }
        }
    }

    static func samples(_ random: inout SplitMix64) -> [[String: StoredValue]] {
        let texts = ["", "tab\there", "new\nline", "cr\rhere", "back\\slash", "\\N", "\\", "ü→🎉", "a\t\\n\nb", "NULL"]
        let doubles: [Double] = [0.1, -0.0, 1e308, Double.leastNonzeroMagnitude, -2.5e-300, 123456789.123456789, Double.pi, 1.0 / 3]
        let decimals = ["0", "-1.5", "12345678901234567890123456789012345678", "0.000000000000000000000000000001",
                        "-99999999999999999.999"].map { Decimal(string: $0)! }
        let dates = [0.000001, -0.5, 1_234_567.123456, -1e9 + 0.25, -62_135_596_800, -70_000_000_000.5, 4_102_444_800.999999]
            .map { Date(timeIntervalSince1970: $0) }
        let bytes: [[UInt8]] = [[], [0x5c], [0, 9, 10, 13, 0x5c, 0x4e, 255], Array(0...255)]
        var rows: [[String: StoredValue]] = []
        for i in 0..<40 {
            var row: [String: StoredValue] = [:]
            row["flag"] = i % 5 == 0 ? .null : .bool(i % 2 == 0)
            row["small"] = .int([Int64(Int16.min), Int64(Int16.max), -1, 0][i % 4])
            row["medium"] = .int([Int64(Int32.min), Int64(Int32.max), 7][i % 3])
            row["large"] = .int([Int64.min, Int64.max, Int64(random.below(1 << 30)) - (1 << 29)][i % 3])
            row["real"] = i % 7 == 6 ? .null : .double(doubles[i % doubles.count])
            row["exact"] = .decimal(decimals[i % decimals.count])
            row["text"] = i % 11 == 10 ? .null : .string(texts[i % texts.count])
            row["when"] = .date(dates[i % dates.count])
            row["id"] = .uuid(UUID())
            row["bytes"] = .binary(bytes[i % bytes.count])
            rows.append(row)
        }
        return rows
    }

    func insert(_ rows: [[String: StoredValue]], into store: RecordStore) throws -> [ObjectID] {
        try store.write { tx in
            var ids: [ObjectID] = []
            for row in rows {
                let id = try tx.insert("Sample", row)
                if let last = ids.last { try tx.set("next", of: id, to: last) }
                ids.append(id)
            }
            return ids
        }
    }

    func expectSame(_ a: RecordStore, _ b: RecordStore, _ ids: [ObjectID], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for id in ids {
            let left = try a.read { try $0.values(of: id) } ?? [:]
            let right = try b.read { try $0.values(of: id) } ?? [:]
            #expect(Set(left.keys) == Set(right.keys), "\(id)", sourceLocation: sourceLocation)
            for (name, value) in left {
                if case .date(let x) = value, case .date(let y)? = right[name] {
                    // Microseconds, as PostgreSQL keeps them.
                    #expect(abs(x.timeIntervalSince(y)) < 0.000_000_5 || abs(x.timeIntervalSince1970) > 1e10
                            && abs(x.timeIntervalSince(y)) < 0.000_001, "\(id).\(name): \(x) \(y)", sourceLocation: sourceLocation)
                } else {
                    #expect(right[name] == value, "\(id).\(name): \(value) came back as \(right[name].map { "\($0)" } ?? "nothing")",
                            sourceLocation: sourceLocation)
                }
            }
            let targets = try (a.read { try $0.target(of: "next", of: id) }, b.read { try $0.target(of: "next", of: id) })
            #expect(targets.0 == targets.1, sourceLocation: sourceLocation)
        }
    }

    @Test func everyTypeComesBackFromTheCopyAndFromPushes() async throws {
        var random = SplitMix64(seed: 31)
        let (database, url) = try cluster.makeDatabase()
        let model = try Self.model()
        func store(_ name: String) throws -> RecordStore {
            var options = StoreOptions(durability: .normal)
            options.sharing = .shared
            return try RecordStore(path: directory + "/\(name).strata", model: model, options: options, history: .on)
        }
        let a = try store("a")
        defer { try? a.close() }
        let copied = try insert(Self.samples(&random), into: a)
        let one = PostgresReplicator(store: a, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]),
                                     name: "a")
        let first = try await one.exchange()
        #expect(first.pushed.copiedAll && first.pushed.rows == copied.count, "\(first.pushed)")
        // The foreign keys the copy set aside are back as they were made.
        let keys = try cluster.psql("SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' "
            + "ORDER BY conname", database: database).split(separator: "\n").map(String.init)
        #expect(keys == ["strata_fk_Sample_next FOREIGN KEY (next) REFERENCES \"Sample\"(pk) ON UPDATE CASCADE ON DELETE SET NULL "
            + "DEFERRABLE INITIALLY DEFERRED"], "\(keys)")
        let pushed = try insert(Self.samples(&random), into: a)
        _ = try await one.exchange()
        let b = try store("b")
        defer { try? b.close() }
        let two = PostgresReplicator(store: b, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]),
                                     name: "b")
        _ = try await two.exchange()
        try expectSame(a, b, copied + pushed)
    }

    /// A replicator that does not own the tables (given rights on them by their owner) copies
    /// with the foreign keys in place: it may not set them aside.
    @Test func aReplicatorThatDoesNotOwnTheTablesCopiesWithTheKeysInPlace() async throws {
        var random = SplitMix64(seed: 32)
        let (database, url) = try cluster.makeDatabase()
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        let store = try RecordStore(path: directory + "/owned.strata", model: try Self.model(), options: options, history: .on)
        defer { try? store.close() }
        let ids = try insert(Self.samples(&random), into: store)
        let owner = PostgresReplicator(store: store, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]))
        #expect(try await owner.push().copiedAll)
        // The dataset forgotten, so the next push copies again — as another role.
        let role = "copier_\(UInt32.random(in: 0...UInt32.max))"
        _ = try cluster.psql("CREATE ROLE \(role) LOGIN PASSWORD 'secret'; GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role); "
            + "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role); GRANT CREATE ON SCHEMA public TO \(role); "
            + "DELETE FROM strata_replicas; DELETE FROM strata_replication",
                             database: database)
        let other = PostgresReplicator(
            store: store, destination: try PostgresDestination(url: url.replacingOccurrences(of: "://\(cluster.user)@", with: "://\(role)@"),
                                                               environment: ["PGPASSWORD": "secret"]))
        let copy = try await other.push()
        #expect(copy.copiedAll && copy.rows == ids.count, "\(copy)")
        #expect(try cluster.psql("SELECT count(*) FROM pg_constraint WHERE contype = 'f'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        // The rows are there (every value's round trip is the test above's).
        let texts = try store.read { reader in
            try reader.objects("Sample").filter { try reader.values(of: $0)?["text"] == .string("a\t\\n\nb") }.count
        }
        #expect(try cluster.psql("SELECT count(*), count(*) FILTER (WHERE text = E'a\\t\\\\n\\nb') FROM \"Sample\"",
                                 database: database).trimmingCharacters(in: .whitespacesAndNewlines) == "\(ids.count)|\(texts)")
        #expect(texts > 0)
    }
}
