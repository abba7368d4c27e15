import Foundation
import Synchronization
import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Several stores replicating into one dataset (decision 110): the store that creates it keeps
/// its keys' range, a store that joins comes empty, takes another range and the dataset's rows,
/// and no push of either empties the tables or gives two rows one key; a store holding rows of
/// its own is refused instead of copying them over the others'.
@Suite(.serialized) struct DatasetJoinTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-join-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func makeStore(_ file: String) throws -> RecordStore {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        return try RecordStore(path: directory + "/\(file).strata", model: try todoModel(), options: options, history: .on)
    }

    func replicator(_ store: RecordStore, _ url: String, name: String) throws -> PostgresReplicator {
        PostgresReplicator(store: store, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]),
                           name: name)
    }

    func register(_ database: String) throws -> [String] {
        try cluster.psql("SELECT number || ':' || name FROM strata_replicas ORDER BY number", database: database)
            .split(separator: "\n").map(String.init)
    }

    @Test func aStoreJoiningTakesItsOwnRangeAndTheDatasetsRows() async throws {
        let (database, url) = try cluster.makeDatabase()
        let first = try makeStore("first")
        defer { try? first.close() }
        let (lists, _) = try ReplicationTests.fill(first)
        let one = try replicator(first, url, name: "first")
        #expect(try await one.push().copiedAll)
        #expect(try register(database) == ["0:first"])

        // An empty store joins: range 1, and a copy of what PostgreSQL holds, keys kept.
        let second = try makeStore("second")
        defer { try? second.close() }
        let two = try replicator(second, url, name: "second")
        let joined = try await two.push()
        #expect(joined.copiedAll && joined.transactions == 0, "\(joined)")
        #expect(try register(database) == ["0:first", "1:second"])
        #expect(try second.read { try $0.keyRange() }.number == 1)
        let expected = try ReplicatedContent.ofStore(first)
        let copied = try ReplicatedContent.ofStore(second)
        #expect(copied == expected, "\(ReplicatedContent.difference(copied, expected))")
        #expect(try second.read { try $0.checkRecords() } == [])
        // Its copy is not pushed back.
        #expect(try await two.push().transactions == 0)

        // Each store's new rows take keys of its own range; neither push empties the tables.
        let mine = try await second.write { tx in
            let list = try tx.insert("TodoList", ["name": "Second's"])
            try tx.insert("Item", ["title": "From second", "list": lists[0]])
            return list
        }
        #expect(mine.primaryKey == 1 << 40)
        let theirs = try await first.write { tx in try tx.insert("TodoList", ["name": "First's"]) }
        #expect(theirs.primaryKey < 1 << 40)
        #expect(try await two.push().transactions == 1)
        #expect(try await one.push().transactions == 1)
        let lines = try cluster.psql("SELECT pk FROM \"TodoList\" ORDER BY pk", database: database)
            .split(separator: "\n").compactMap { UInt64($0) }
        #expect(lines.contains(mine.primaryKey) && lines.contains(theirs.primaryKey) && lines.count == lists.count + 2)
        #expect(try cluster.psql("SELECT count(*) FROM \"Item\" WHERE title = 'From second'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1")

        // A store that holds rows of its own cannot join: its keys are range 0's too.
        let third = try makeStore("third")
        defer { try? third.close() }
        _ = try ReplicationTests.fill(third)
        await #expect(throws: ReplicationError.self) { _ = try await replicator(third, url, name: "third").push() }
        do {
            _ = try await replicator(third, url, name: "third").push()
        } catch let error as ReplicationError {
            guard case .joinRefused(let name, let reason) = error else { Issue.record("\(error)"); return }
            #expect(name == "third" && reason.contains("rows of its own"), "\(reason)")
        }
        #expect(try register(database) == ["0:first", "1:second"])
        #expect(try cluster.psql("SELECT count(*) FROM \"TodoList\"", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == String(lists.count + 2))
        #expect(try third.read { try $0.keyRange() }.number == 0)
    }

    /// A store of another model version (its tags' labels not unique) is refused when it joins,
    /// the error naming the line that differs; nothing is registered for it.
    @Test func aStoreOfAnotherModelIsRefusedNamingTheDifference() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("model-a")
        defer { try? a.close() }
        _ = try ReplicationTests.fill(a)
        _ = try await replicator(a, url, name: "a").exchange()
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        let other = try Model(entities: todoEntities().map { entity in
            guard entity.name == "Tag" else { return entity }
            return Entity("Tag") {
                AttributeDescription("label", .string)
                AttributeDescription("score", .int64, default: 0)
                RelationshipDescription("lists", toMany: "TodoList", inverse: "tags")
                DerivedAttributeDescription("listCount", .int64, "lists.@count")
                DerivedAttributeDescription("listItemTotal", .int64, "lists.itemCount.@sum")
            }
        })
        let b = try RecordStore(path: directory + "/model-b.strata", model: other, options: options, history: .on)
        defer { try? b.close() }
        do {
            _ = try await replicator(b, url, name: "b").exchange()
            Issue.record("a store of another model joined")
        } catch ReplicationError.modelMismatch(let reason) {
            #expect(reason.contains("store 'a'") && reason.contains("'a' has \"") && reason.contains("label"), "\(reason)")
        }
        #expect(try register(database) == ["0:a"])
    }

    func sql(_ statement: String, _ database: String) throws -> String {
        try cluster.psql(statement, database: database).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Two stores and a server application writing one dataset: each store's exchange takes
    /// what the other pushed and what the server wrote (never its own), derived values are
    /// recomputed by each, a property both stores changed ends with the value PostgreSQL
    /// applied last in both, and after a last round every store equals PostgreSQL.
    @Test func storesSeeEachOthersWritesAndConverge() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("a")
        defer { try? a.close() }
        let (lists, tags) = try ReplicationTests.fill(a)
        let one = try replicator(a, url, name: "a")
        _ = try await one.exchange()
        let b = try makeStore("b")
        defer { try? b.close() }
        let two = try replicator(b, url, name: "b")
        _ = try await two.exchange()
        func converged(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let inA = try ReplicatedContent.ofStore(a)
            let inB = try ReplicatedContent.ofStore(b)
            let inPostgres = try ReplicatedContent.ofDatabase(database, in: cluster, model: a.model)
            #expect(inA == inB, "\(label): \(ReplicatedContent.difference(inA, inB))", sourceLocation: sourceLocation)
            #expect(inA == inPostgres, "\(label): \(ReplicatedContent.difference(inA, inPostgres))", sourceLocation: sourceLocation)
            #expect(try a.read { try $0.checkRecords() } == [] && b.read { try $0.checkRecords() } == [],
                    sourceLocation: sourceLocation)
        }
        try converged("after the join")

        // A's changes reach B: an insert into a list (its count and sum move in B too), an
        // update, a deletion, a link.
        let items = try a.read { try $0.objects("Item") }
        try await a.write { tx in
            try tx.insert("Item", ["title": "New in A", "amount": Decimal(5), "list": lists[0]])
            try tx.update(items[1], ["title": "Renamed in A"])
            try tx.delete(items[2])
            try tx.add(lists[2], to: "lists", of: tags[1])
        }
        _ = try await one.exchange()
        let pulledByB = try await two.exchange()
        #expect(pulledByB.pulled.changes > 0 && pulledByB.pulled.conflicts == 0, "\(pulledByB.pulled)")
        try converged("A's writes in B")
        // Nothing comes back to A from its own writes, nor to B from B's pushes.
        #expect(try await one.exchange().pulled.rowsApplied == 0)
        let waiting = try sql("SELECT replica, tbl, pk, op, cols, claim FROM strata_changes", database)
        let quiet = try await two.exchange()
        #expect(quiet.pulled.changes == 0, "\(quiet) \(waiting)")

        // B's writes, keyed in B's range, reach A.
        let fromB = try await b.write { tx in
            let list = try tx.insert("TodoList", ["name": "From B"])
            try tx.insert("Item", ["title": "In B's list", "amount": Decimal(3), "list": list])
            try tx.update(items[3], ["amount": Decimal(42)])
            return list
        }
        #expect(fromB.primaryKey >= 1 << 40)
        _ = try await two.exchange()
        _ = try await one.exchange()
        try converged("B's writes in A")

        // Both change one property: the write PostgreSQL applies last wins everywhere.
        try await a.write { tx in try tx.update(items[4], ["title": "A's title"]) }
        try await b.write { tx in try tx.update(items[4], ["title": "B's title"]) }
        _ = try await one.exchange()
        let decided = try await two.exchange()
        #expect(decided.pulled.conflicts == 1, "\(decided.pulled)")
        _ = try await one.exchange()
        try converged("a property both changed")
        #expect(try a.read { try $0.values(of: items[4])?["title"] } == .string("B's title"))

        // A server application's insert (keeping its key from 2^62) and update reach both.
        _ = try sql("INSERT INTO \"Item\" (title, amount, quantity, list) VALUES ('From the server', 7, 1, \(lists[1].primaryKey))",
                    database)
        _ = try sql("UPDATE \"TodoList\" SET name = 'Served' WHERE pk = \(lists[2].primaryKey)", database)
        _ = try await one.exchange()
        _ = try await two.exchange()
        _ = try await one.exchange()
        try converged("the server's writes")
        let served = try a.read { reader in try reader.objects("Item").first { try reader.values(of: $0)?["title"] == .string("From the server") } }
        #expect((served?.primaryKey ?? 0) >= UInt64(1) << 62)
        let left = try sql("SELECT replica, tbl, pk, op, cols, claim FROM strata_changes", database)
        #expect(left.isEmpty, "\(left)")
    }

    /// A store that leaves pushes what it has left, its name and range are retired, its queue
    /// is dropped and no more changes are kept for it; it cannot come back under that name, and
    /// the next store to join gets a range never handed out.
    @Test func aStoreThatLeavesStopsCollectingChanges() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("stays")
        defer { try? a.close() }
        let (lists, _) = try ReplicationTests.fill(a)
        let one = try replicator(a, url, name: "stays")
        _ = try await one.exchange()
        let b = try makeStore("leaves")
        defer { try? b.close() }
        let two = try replicator(b, url, name: "leaves")
        _ = try await two.exchange()
        try await a.write { tx in try tx.update(lists[0], ["name": "Queued for the leaver"]) }
        _ = try await one.exchange()
        let last = try await b.write { tx in try tx.insert("Tag", ["label": "last words"]) }
        #expect(try sql("SELECT count(*) FROM strata_changes WHERE replica = 1", database) != "0")
        let (pushed, dropped) = try await two.leave()
        #expect(pushed.transactions == 1 && dropped > 0, "\(pushed) \(dropped)")
        #expect(try sql("SELECT count(*) FROM strata_changes WHERE replica = 1", database) == "0")
        #expect(try sql("SELECT pk FROM \"Tag\" WHERE label = 'last words'", database) == String(last.primaryKey))
        #expect(try register(database) == ["0:stays", "1:leaves"])
        #expect(try sql("SELECT count(*) FROM strata_replicas WHERE retired IS NOT NULL", database) == "1")
        // No more changes are kept for it, and it cannot come back under its name.
        try await a.write { tx in try tx.update(lists[1], ["name": "After the leaving"]) }
        _ = try await one.exchange()
        #expect(try sql("SELECT count(*) FROM strata_changes WHERE replica = 1", database) == "0")
        do {
            _ = try await two.push()
            Issue.record("a retired store pushed")
        } catch let error as ReplicationError {
            guard case .joinRefused(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("retired"), "\(reason)")
        }
        // The next store gets range 2: 1 stays retired with its rows.
        let c = try makeStore("next")
        defer { try? c.close() }
        _ = try await replicator(c, url, name: "next").exchange()
        #expect(try register(database) == ["0:stays", "1:leaves", "2:next"])
        #expect(try ReplicatedContent.ofStore(c) == ReplicatedContent.ofStore(a))
    }

    /// A store whose writer commits while it leaves: the retirement waits for a push that holds
    /// the commit (rolled back and pushed again), and a writer that never stops keeps the store
    /// in the dataset with a typed error instead of leaving its writes behind.
    @Test func aStoreThatCommitsWhileLeavingPushesItFirst() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("stays-while")
        defer { try? a.close() }
        _ = try ReplicationTests.fill(a)
        _ = try await replicator(a, url, name: "stays").exchange()
        let b = try makeStore("leaves-while")
        defer { try? b.close() }
        let two = try replicator(b, url, name: "leaves")
        _ = try await two.exchange()
        let commits = Mutex(0)
        two.beforeRetiring.withLock { hook in
            hook = {
                let n = commits.withLock { count in
                    count += 1
                    return count
                }
                guard n == 1 else { return }
                try b.write { tx in _ = try tx.insert("Tag", ["label": "written while leaving"]) }
            }
        }
        let (pushed, _) = try await two.leave()
        #expect(commits.withLock { $0 } == 2 && pushed.transactions == 1, "\(pushed)")
        #expect(try sql("SELECT count(*) FROM \"Tag\" WHERE label = 'written while leaving'", database) == "1")
        #expect(try sql("SELECT count(*) FROM strata_replicas WHERE retired IS NOT NULL", database) == "1")

        // A writer that commits before every check: five pushes, then a refusal; still registered.
        let c = try makeStore("never-stops")
        defer { try? c.close() }
        let three = try replicator(c, url, name: "never-stops")
        _ = try await three.exchange()
        three.beforeRetiring.withLock { hook in
            hook = { try c.write { tx in _ = try tx.insert("Tag", ["label": "again \(UUID().uuidString)"]) } }
        }
        do {
            _ = try await three.leave()
            Issue.record("a store that kept committing left")
        } catch let error as ReplicationError {
            guard case .leaveRefused(let name, _) = error else { Issue.record("\(error)"); return }
            #expect(name == "never-stops")
        }
        #expect(try sql("SELECT count(*) FROM strata_replicas WHERE retired IS NULL AND name = 'never-stops'", database) == "1")
    }

    /// With several stores, a server application cannot put a row on a key of a store's range
    /// or move a row to another key; a row it inserts takes its key from the sequence.
    @Test func serverRowsKeepKeysOutsideTheStoresRanges() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("ranges-a")
        defer { try? a.close() }
        let (lists, _) = try ReplicationTests.fill(a)
        _ = try await replicator(a, url, name: "a").exchange()
        let b = try makeStore("ranges-b")
        defer { try? b.close() }
        _ = try await replicator(b, url, name: "b").exchange()
        for statement in ["INSERT INTO \"Tag\" (pk, label) VALUES (\((UInt64(2) << 40) + 5), 'in a range')",
                          "INSERT INTO \"Tag\" (pk, label) VALUES (7, 'in range 0')",
                          "UPDATE \"TodoList\" SET pk = pk + 1000 WHERE pk = \(lists[0].primaryKey)"] {
            do {
                _ = try sql(statement, database)
                Issue.record("went through: \(statement)")
            } catch {
                #expect("\(error)".contains("take their keys from its key sequence"), "\(statement): \(error)")
            }
        }
        _ = try sql("INSERT INTO \"Tag\" (label) VALUES ('from the sequence')", database)
        _ = try sql("UPDATE \"Tag\" SET score = 3 WHERE label = 'from the sequence'", database)
        let key = try sql("SELECT pk FROM \"Tag\" WHERE label = 'from the sequence'", database)
        #expect((UInt64(key) ?? 0) >= UInt64(1) << 62, "\(key)")
    }

    /// An optional attribute with a default that a store set to nil stays nil in the other
    /// stores, through a join's copy and through a pull: only a server application's NULL
    /// means "not given" (the default).
    @Test func anotherStoresNilIsNotTheDefault() async throws {
        let (database, url) = try cluster.makeDatabase()
        let model = try Model {
            Entity("Note") {
                AttributeDescription("title", .string)
                AttributeDescription("mood", .string, optional: true, default: "calm")
            }
        }
        func store(_ file: String) throws -> RecordStore {
            var options = StoreOptions(durability: .normal)
            options.sharing = .shared
            return try RecordStore(path: directory + "/\(file).strata", model: model, options: options, history: .on)
        }
        let a = try store("nil-a")
        defer { try? a.close() }
        try await a.write { tx in _ = try tx.insert("Note", ["title": "before", "mood": StoredValue.null]) }
        let one = try replicator(a, url, name: "a")
        _ = try await one.exchange()
        let b = try store("nil-b")
        defer { try? b.close() }
        let two = try replicator(b, url, name: "b")
        _ = try await two.exchange()
        try await a.write { tx in _ = try tx.insert("Note", ["title": "after", "mood": StoredValue.null]) }
        _ = try await one.exchange()
        _ = try await two.exchange()
        _ = try sql("INSERT INTO \"Note\" (title) VALUES ('from the server')", database)
        _ = try await one.exchange()
        _ = try await two.exchange()
        _ = try await one.exchange()
        func moods(_ store: RecordStore) throws -> [String: StoredValue] {
            try store.read { reader in
                var out: [String: StoredValue] = [:]
                for id in try reader.objects("Note") {
                    let values = try reader.values(of: id) ?? [:]
                    if case .string(let title)? = values["title"] { out[title] = values["mood"] ?? .null }
                }
                return out
            }
        }
        let expected: [String: StoredValue] = ["before": .null, "after": .null, "from the server": .string("calm")]
        #expect(try moods(a) == expected)
        #expect(try moods(b) == expected)
        #expect(try sql("SELECT count(*) FROM \"Note\" WHERE mood IS NULL", database) == "2")
    }

    /// A store whose machine is gone is retired by name alone: its queue, which grew with every
    /// write of the others while nothing pulled it, is dropped and stops growing.
    @Test func aStoreWhoseMachineIsGoneIsRetiredByName() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("survivor")
        defer { try? a.close() }
        let (lists, _) = try ReplicationTests.fill(a)
        let one = try replicator(a, url, name: "survivor")
        _ = try await one.exchange()
        let gone = try makeStore("gone")
        _ = try await replicator(gone, url, name: "gone").push()
        try gone.close()
        try await a.write { tx in try tx.update(lists[0], ["name": "While it was away"]) }
        _ = try await one.exchange()
        #expect(try sql("SELECT count(*) FROM strata_changes WHERE replica = 1", database) != "0")
        let destination = try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password])
        #expect(try await PostgresReplicator.retire("gone", at: destination) > 0)
        #expect(try sql("SELECT count(*) FROM strata_changes WHERE replica = 1", database) == "0")
        try await a.write { tx in try tx.update(lists[1], ["name": "After it was retired"]) }
        _ = try await one.exchange()
        #expect(try sql("SELECT count(*) FROM strata_changes WHERE replica = 1", database) == "0")
        // A name never registered, or retired already, retires nothing.
        #expect(try await PostgresReplicator.retire("gone", at: destination) == 0)
        #expect(try await PostgresReplicator.retire("never", at: destination) == 0)
    }

    /// Stores that only push still record their pushes for each other once there are two: a
    /// store that starts pulling later finds what the others pushed before.
    @Test func pushesBeforeAnyPullReachAStoreThatPullsLater() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("pushes-a")
        defer { try? a.close() }
        _ = try ReplicationTests.fill(a)
        _ = try await replicator(a, url, name: "a").push()
        let b = try makeStore("pushes-b")
        defer { try? b.close() }
        let two = try replicator(b, url, name: "b")
        _ = try await two.push()
        try await b.write { tx in _ = try tx.insert("Tag", ["label": "pushed by b"]) }
        _ = try await two.push()
        let pulled = try await replicator(a, url, name: "a").exchange()
        #expect(pulled.pulled.rowsApplied == 1, "\(pulled.pulled)")
        #expect(try ReplicatedContent.ofStore(a) == ReplicatedContent.ofStore(b))
        #expect(try ReplicatedContent.ofStore(a) == ReplicatedContent.ofDatabase(database, in: cluster, model: a.model))
    }

    /// The store that created the dataset, registered before its first copy was made (killed
    /// between the two): when it comes back after another store joined, it copies its rows
    /// without emptying the tables, and the other store's rows stay.
    @Test func aCreatorWhoseCopyWasCutOffCopiesWithoutEmptyingTheTables() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("creator")
        defer { try? a.close() }
        _ = try ReplicationTests.fill(a)
        let one = try replicator(a, url, name: "creator")
        // Its registration and no copy: as a first push killed after joining leaves them.
        _ = try sql("CREATE TABLE strata_replicas (number bigint PRIMARY KEY, name text NOT NULL UNIQUE, "
                    + "joined timestamp with time zone NOT NULL DEFAULT now(), retired timestamp with time zone); "
                    + "INSERT INTO strata_replicas (number, name) VALUES (0, 'creator')", database)
        let b = try makeStore("after")
        defer { try? b.close() }
        let two = try replicator(b, url, name: "after")
        _ = try await two.exchange()
        let theirs = try await b.write { tx in try tx.insert("Tag", ["label": "joined first"]) }
        _ = try await two.exchange()
        let copied = try await one.push()
        #expect(copied.copiedAll && !copied.joinedDataset, "\(copied)")
        #expect(try sql("SELECT count(*) FROM \"Tag\" WHERE pk = \(theirs.primaryKey)", database) == "1")
        _ = try await two.exchange()
        _ = try await one.exchange()
        #expect(try ReplicatedContent.ofStore(a) == ReplicatedContent.ofStore(b))
        #expect(try ReplicatedContent.ofStore(a) == ReplicatedContent.ofDatabase(database, in: cluster, model: a.model))
    }

    /// A dataset made before the register (a `strata_replication` row and no `strata_replicas`
    /// row): its store is registered with range 0, where its keys are, and the next store joins.
    @Test func aReplicationMadeBeforeTheRegisterKeepsRangeZero() async throws {
        let (database, url) = try cluster.makeDatabase()
        let first = try makeStore("old")
        defer { try? first.close() }
        _ = try ReplicationTests.fill(first)
        _ = try await replicator(first, url, name: "old").push()
        _ = try cluster.psql("DELETE FROM strata_replicas", database: database)
        let joining = try makeStore("new")
        defer { try? joining.close() }
        _ = try await replicator(joining, url, name: "new").push()
        #expect(try register(database) == ["0:old", "1:new"])
        #expect(try ReplicatedContent.ofStore(joining) == ReplicatedContent.ofStore(first))
        try await first.write { tx in _ = try tx.insert("Tag", ["label": "after"]) }
        #expect(try await replicator(first, url, name: "old").push().transactions == 1)
        #expect(try first.read { try $0.keyRange() }.number == 0)
    }

    /// The register knows each store by its file's id: a store pushed under another store's
    /// name, or a copy of a store's file under a new name, is refused before anything is written
    /// on either side (the store keeps its range); a register made before file ids were kept
    /// gains the column and the first file to come claims its name.
    @Test func aStoreIsKnownByItsFileNotByTheNameItIsGiven() async throws {
        let (database, url) = try cluster.makeDatabase()
        let first = try makeStore("first")
        defer { try? first.close() }
        _ = try ReplicationTests.fill(first)
        _ = try await replicator(first, url, name: "first").push()
        let second = try makeStore("second")
        defer { try? second.close() }
        _ = try await replicator(second, url, name: "second").push()
        let rows = try cluster.psql("SELECT count(*) FROM \"TodoList\"", database: database)

        func refusal(_ store: RecordStore, as name: String) async throws -> String? {
            do {
                _ = try await replicator(store, url, name: name).push()
                return nil
            } catch ReplicationError.joinRefused(let refused, let reason) {
                #expect(refused == name)
                return reason
            }
        }
        // The dataset's creator under the joiner's name, and under a new one.
        let asSecond = try await refusal(first, as: "second")
        #expect(asSecond?.contains("registered in the dataset as 'first'") == true, "\(asSecond ?? "pushed")")
        #expect(try await refusal(first, as: "web-3")?.contains("as 'first'") == true)
        #expect(try first.read { try $0.keyRange() }.number == 0)
        // Another store, empty, under a name taken by a file of its own.
        let stranger = try makeStore("stranger")
        defer { try? stranger.close() }
        let under = try await refusal(stranger, as: "second")
        #expect(under?.contains("'second' is another store file") == true, "\(under ?? "pushed")")
        #expect(try stranger.read { try $0.keyRange() }.number == 0)
        // A copy of the joiner's file under a new name.
        try FileManager.default.copyItem(atPath: directory + "/second.strata", toPath: directory + "/copy.strata")
        let copy = try makeStore("copy")
        defer { try? copy.close() }
        #expect(try await refusal(copy, as: "copy")?.contains("as 'second'") == true)
        #expect(try register(database) == ["0:first", "1:second"])
        #expect(try cluster.psql("SELECT count(*) FROM \"TodoList\"", database: database) == rows)

        // An empty store opened read-only cannot take a range: refused before it is registered.
        var readOnly = StoreOptions(durability: .normal)
        readOnly.readOnly = true
        let reader = try RecordStore(path: directory + "/stranger.strata", model: try todoModel(), options: readOnly)
        defer { try? reader.close() }
        #expect(try await refusal(reader, as: "web-4")?.contains("open read-only") == true)
        #expect(try register(database) == ["0:first", "1:second"])

        // A register without the column: added, and only the store that holds a name's range
        // claims it.
        _ = try cluster.psql("ALTER TABLE strata_replicas DROP COLUMN store_file", database: database)
        #expect(try await refusal(first, as: "second")?.contains("'second' is another store file") == true)
        #expect(try await refusal(stranger, as: "second")?.contains("another store file") == true)
        try await first.write { tx in _ = try tx.insert("Tag", ["label": "after"]) }
        #expect(try await replicator(first, url, name: "first").push().transactions == 1)
        #expect(try await replicator(second, url, name: "second").push().transactions == 0)
        #expect(try cluster.psql("SELECT count(store_file) FROM strata_replicas", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "2")
        #expect(try await refusal(stranger, as: "first")?.contains("another store file") == true)
    }
}
