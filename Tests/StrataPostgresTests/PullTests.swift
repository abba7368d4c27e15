import Foundation
@testable import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Rows a server application changes in PostgreSQL come back into the store (decision 63),
/// one test per case of the conflict rule: a change on one side only, the same property on
/// both (the store's value wins), other properties of one row (both kept), a deletion against
/// a change on either side (the deletion wins), inserts that take store keys, links, derived
/// columns the server wrote over, the replicator's own writes never coming back, an
/// interrupted pull, and a row the store refuses.
@Suite(.serialized) struct PullTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-pull-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A filled store, replicated, with pulling set up; the database, the replicator and the
    /// fill's lists and tags.
    func replicated(transactionsPerBatch: Int = 1_000) async throws
        -> (store: RecordStore, database: String, replicator: PostgresReplicator, lists: [ObjectID], tags: [ObjectID]) {
        let (database, url) = try cluster.makeDatabase()
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        let store = try RecordStore(path: directory + "/\(database).strata", model: try todoModel(), options: options,
                                    history: .on)
        let (lists, tags) = try ReplicationTests.fill(store)
        let replicator = PostgresReplicator(
            store: store, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]),
            transactionsPerBatch: transactionsPerBatch)
        let first = try await replicator.pull()
        #expect(first.changes == 0)
        return (store, database, replicator, lists, tags)
    }

    func sql(_ statement: String, _ database: String) throws -> String {
        try cluster.psql(statement, database: database).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func expectSame(_ store: RecordStore, _ database: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model) == ReplicatedContent.ofStore(store),
                sourceLocation: sourceLocation)
        #expect(try sql("SELECT count(*) FROM strata_changes", database) == "0", sourceLocation: sourceLocation)
    }

    /// The steps of a pull up to the store's commit, as a pull killed right after it leaves
    /// them: `between` runs after the claim, before the keys.
    func pullUntilTheStoreCommits(_ replicator: PostgresReplicator, on connection: PostgresConnection,
                                  between: () throws -> Void = {}) async throws {
        var claim = try #require(try await replicator.claimChanges(on: connection))
        try between()
        var report = PullReport()
        try await replicator.key(&claim, on: connection, report: &report)
        let current = try await replicator.readCurrent(claim, on: connection)
        let pushed = try #require(try await replicator.storedToken(on: connection))
        try replicator.apply(claim, current: current, after: pushed, report: &report)
    }

    func item(_ store: RecordStore, titled title: String) throws -> ObjectID? {
        try store.read { reader in
            try reader.objects("Item").first { try reader.values(of: $0)?["title"] == .string(title) }
        }
    }

    /// Until a store first pulls, nothing records a server's writes and the pushes would
    /// overwrite them unseen: each is refused with an error that says so (the replicator's own
    /// writes and their cascades go through), and once a pull is set up they are recorded.
    @Test func serverWritesAreRefusedUntilAStorePulls() async throws {
        let (database, url) = try cluster.makeDatabase()
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        let store = try RecordStore(path: directory + "/\(database).strata", model: try todoModel(), options: options,
                                    history: .on)
        defer { try? store.close() }
        let (lists, tags) = try ReplicationTests.fill(store)
        let replicator = PostgresReplicator(
            store: store, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]))
        _ = try await replicator.push()
        let item = try store.read { try $0.objects("Item")[0] }
        for statement in ["UPDATE \"Item\" SET title = 'Server' WHERE pk = \(item.primaryKey)",
                          "INSERT INTO \"Item\" (pk, title) VALUES (\(UInt64(1) << 62), 'Server')",
                          "DELETE FROM \"TodoList\" WHERE pk = \(lists[0].primaryKey)",
                          "DELETE FROM \"Tag_lists\"",
                          "TRUNCATE \"Tag\" CASCADE"] {
            do {
                _ = try sql(statement, database)
                Issue.record("a server write before any pull went through: \(statement)")
            } catch {
                #expect("\(error)".contains("refused until a Strata store pulls") || "\(error)".contains("TRUNCATE"),
                        "\(statement): \(error)")
            }
        }
        // The store's own pushes, a cascade delete among them, still go through.
        try await store.write { tx in try tx.delete(lists[1]) }
        try await store.write { tx in try tx.remove(lists[0], from: "lists", of: tags[0]) }
        #expect(try await replicator.push().transactions == 2)
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model) == ReplicatedContent.ofStore(store))
        // Once a store pulls, the server's writes are recorded and come back.
        #expect(try await replicator.pull().changes == 0)
        _ = try sql("UPDATE \"Item\" SET title = 'Server' WHERE pk = \(item.primaryKey)", database)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.changes == 1 && pulled.rowsApplied == 1, "\(pulled)")
        #expect(try store.read { try $0.values(of: item)?["title"] } == .string("Server"))
        try expectSame(store, database)
        // A later push-only connection does not put the refusal back.
        _ = try await replicator.push()
        _ = try sql("UPDATE \"Item\" SET title = 'Again' WHERE pk = \(item.primaryKey)", database)
        #expect(try await replicator.pull().changes == 1)
    }

    /// The triggers and key defaults lock their tables while they are made: a pull after the
    /// first makes none of them again (only the functions are replaced).
    @Test func laterPullsLeaveTheTriggersAsTheyAre() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let query = "SELECT string_agg(t.tgname || ':' || t.xmin::text, ',' ORDER BY t.tgname, c.relname) FROM pg_trigger t "
            + "JOIN pg_class c ON c.oid = t.tgrelid WHERE t.tgname LIKE 'strata%'"
        let before = try sql(query, database)
        #expect(before.contains("strata_changes_insert") && !before.contains("strata_refuse"), "\(before)")
        _ = try await replicator.exchange()
        _ = try await replicator.pull()
        #expect(try sql(query, database) == before)
    }

    @Test func aServerChangeComesBackWithDerivedValuesRecomputed() async throws {
        let (store, database, replicator, lists, _) = try await replicated()
        defer { try? store.close() }
        let item = try #require(try item(store, titled: "Item 3"))
        _ = try sql("UPDATE \"Item\" SET amount = 100, title = 'Served' WHERE pk = \(item.primaryKey)", database)
        let (pulled, pushed) = try await replicator.exchange()
        #expect(pulled.changes == 1 && pulled.rowsApplied == 1 && pulled.conflicts == 0, "\(pulled)")
        #expect(pushed.transactions == 1)
        let values = try store.read { try $0.values(of: item) }
        #expect(values?["amount"] == .decimal(100) && values?["title"] == .string("Served"))
        // The list's sum moved in the store and went back to PostgreSQL.
        let total = try store.read { try $0.values(of: lists[0])?["total"] }
        #expect(try sql("SELECT total FROM \"TodoList\" WHERE pk = \(lists[0].primaryKey)", database)
            == ReplicatedContent.text(total ?? .null))
        try expectSame(store, database)
        // Nothing more to do: the pushed transaction did not come back.
        let again = try await replicator.exchange()
        #expect(again.pulled.changes == 0 && again.pushed.transactions == 0)
    }

    @Test func aPropertyChangedOnBothSidesKeepsTheStoresValueAndTheServersOtherChanges() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let item = try #require(try item(store, titled: "Item 4"))
        try await store.write { tx in try tx.update(item, ["title": "Local"]) }
        _ = try sql("UPDATE \"Item\" SET title = 'Server', quantity = 9 WHERE pk = \(item.primaryKey)", database)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.conflicts == 1, "\(pulled)")
        let values = try store.read { try $0.values(of: item) }
        #expect(values?["title"] == .string("Local") && values?["quantity"] == .int(9))
        #expect(try sql("SELECT title || '/' || quantity FROM \"Item\" WHERE pk = \(item.primaryKey)", database) == "Local/9")
        try expectSame(store, database)
    }

    @Test func aChangeThePushAlreadyCarriedIsNotAConflict() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let item = try #require(try item(store, titled: "Item 5"))
        try await store.write { tx in try tx.update(item, ["title": "Local"]) }
        _ = try await replicator.push()
        // The server changed it after it saw the store's value: the server's is newer.
        _ = try sql("UPDATE \"Item\" SET title = 'Server' WHERE pk = \(item.primaryKey)", database)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.conflicts == 0)
        #expect(try store.read { try $0.values(of: item)?["title"] } == .string("Server"))
        try expectSame(store, database)
    }

    @Test func serverInsertsTakeStoreKeysAndTheirReferencesFollow() async throws {
        let (store, database, replicator, _, tags) = try await replicated()
        defer { try? store.close() }
        _ = try sql("""
            BEGIN;
            INSERT INTO "TodoList" (name, budget) VALUES ('Server list', 5);
            INSERT INTO "Item" (title, amount, quantity, list) VALUES ('Server item', 2.5, 3, currval('"strata_key_TodoList"'));
            INSERT INTO "Tag_lists" (source, target) VALUES (\(tags[1].primaryKey), currval('"strata_key_TodoList"'));
            COMMIT;
            """, database)
        #expect(try Int64(sql("SELECT max(pk) FROM \"TodoList\"", database))! >= ReplicationSchema.serverKeyBase)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.rowsKeyed == 2 && pulled.conflicts == 0, "\(pulled)")
        let item = try #require(try item(store, titled: "Server item"))
        #expect(item.primaryKey < UInt64(ReplicationSchema.serverKeyBase))
        let list = try #require(try store.read { try $0.target(of: "list", of: item) })
        let listValues = try store.read { try $0.values(of: list) }
        #expect(listValues?["name"] == .string("Server list") && listValues?["itemCount"] == .int(1)
            && listValues?["tagCount"] == .int(1))
        #expect(try store.read { try $0.members(of: "lists", of: tags[1]) }.contains(list))
        #expect(try Int64(sql("SELECT max(pk) FROM \"TodoList\"", database))! < ReplicationSchema.serverKeyBase)
        try expectSame(store, database)
    }

    @Test func aServerDeletionWinsOverTheStoresChange() async throws {
        let (store, database, replicator, lists, _) = try await replicated()
        defer { try? store.close() }
        let item = try #require(try item(store, titled: "Item 6"))
        try await store.write { tx in try tx.update(item, ["title": "Local"]) }
        _ = try sql("DELETE FROM \"Item\" WHERE pk = \(item.primaryKey)", database)
        // A list deleted on the server: PostgreSQL set its items' list to NULL, and so does the store.
        let orphans = try store.read { try $0.members(of: "items", of: lists[2]) }
        _ = try sql("DELETE FROM \"TodoList\" WHERE pk = \(lists[2].primaryKey)", database)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.deletionsWon == 1, "\(pulled)")
        #expect(try store.read { try $0.values(of: item) } == nil)
        #expect(try store.read { try $0.values(of: lists[2]) } == nil)
        for orphan in orphans where orphan != item {
            #expect(try store.read { try $0.target(of: "list", of: orphan) } == nil)
        }
        try expectSame(store, database)
    }

    @Test func aStoreDeletionWinsOverTheServersChange() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let item = try #require(try item(store, titled: "Item 7"))
        try await store.write { tx in try tx.delete(item) }
        _ = try sql("UPDATE \"Item\" SET title = 'Server' WHERE pk = \(item.primaryKey)", database)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.deletionsWon == 1 && pulled.rowsApplied == 0, "\(pulled)")
        #expect(try sql("SELECT count(*) FROM \"Item\" WHERE pk = \(item.primaryKey)", database) == "0")
        try expectSame(store, database)
    }

    @Test func linksMadeAndBrokenOnTheServer() async throws {
        let (store, database, replicator, lists, tags) = try await replicated()
        defer { try? store.close() }
        _ = try sql("""
            DELETE FROM "Tag_lists" WHERE source = \(tags[0].primaryKey) AND target = \(lists[0].primaryKey);
            INSERT INTO "Tag_lists" (source, target) VALUES (\(tags[1].primaryKey), \(lists[1].primaryKey));
            """, database)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.rowsApplied == 2, "\(pulled)")
        #expect(try store.read { try $0.members(of: "lists", of: tags[0]) } == [lists[1]])
        #expect(try store.read { try $0.values(of: lists[1])?["tagCount"] } == .int(2))
        try expectSame(store, database)
    }

    @Test func derivedColumnsTheServerWroteTakeTheStoresValues() async throws {
        let (store, database, replicator, lists, _) = try await replicated()
        defer { try? store.close() }
        _ = try sql("UPDATE \"TodoList\" SET \"itemCount\" = 999, budget = 12 WHERE pk = \(lists[1].primaryKey)", database)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.rowsApplied == 1)
        #expect(try store.read { try $0.values(of: lists[1])?["budget"] } == .decimal(12))
        #expect(try sql("SELECT \"itemCount\" FROM \"TodoList\" WHERE pk = \(lists[1].primaryKey)", database) == "4")
        try expectSame(store, database)
    }

    @Test func anInterruptedPullAppliesEachChangeOnce() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let connection = try await replicator.connect()
        defer { connection.close() }
        let count = { try store.read { try $0.objects("TodoList").count } }
        let before = try count()
        // Interrupted after the store committed, before the claim was finished.
        _ = try sql("INSERT INTO \"TodoList\" (name) VALUES ('First')", database)
        try await pullUntilTheStoreCommits(replicator, on: connection)
        #expect(try count() == before + 1)
        // The next pull finds the first claim applied: its push (which ends the claim) comes first.
        #expect(try await replicator.settleClaims(on: connection))
        _ = try await replicator.push()
        #expect(try sql("SELECT count(*) FROM strata_changes", database) == "0")
        // Interrupted after keying, before the store applied anything.
        _ = try sql("INSERT INTO \"TodoList\" (name) VALUES ('Second')", database)
        var second = try #require(try await replicator.claimChanges(on: connection))
        var report = PullReport()
        try await replicator.key(&second, on: connection, report: &report)
        // Then a whole pull: the second claim is taken again, and each row is in the store once.
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.changes == 1 && pulled.rowsApplied == 1, "\(pulled)")
        #expect(try count() == before + 2)
        try expectSame(store, database)
    }

    @Test func aLongBacklogIsPushedBeforeThePullAndTheRuleStillHolds() async throws {
        let (store, database, replicator, lists, _) = try await replicated(transactionsPerBatch: 2)
        defer { try? store.close() }
        let updated = try #require(try item(store, titled: "Item 8"))
        let both = try #require(try item(store, titled: "Item 9"))
        // Five transactions waiting: more than a batch, so they go before the pull.
        try await store.write { tx in try tx.update(updated, ["title": "Local 8"]) }
        try await store.write { tx in try tx.update(both, ["title": "Local 9"]) }
        for index in 0..<3 { try await store.write { tx in try tx.update(lists[0], ["name": "Renamed \(index)"]) } }
        _ = try sql("""
            DELETE FROM "Item" WHERE pk = \(updated.primaryKey);
            UPDATE "Item" SET title = 'Server 9', quantity = 7 WHERE pk = \(both.primaryKey);
            """, database)
        _ = try await replicator.exchange()
        // The deletion won; the store's title won, the server's quantity stayed.
        #expect(try store.read { try $0.values(of: updated) } == nil)
        let values = try store.read { try $0.values(of: both) }
        #expect(values?["title"] == .string("Local 9") && values?["quantity"] == .int(7))
        try expectSame(store, database)
    }

    @Test func followingWakesOnTheServersChanges() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let follower = Task { try await replicator.follow(pulling: true) }
        defer { follower.cancel() }
        _ = try sql("INSERT INTO \"Item\" (title) VALUES ('Woken')", database)
        let deadline = ContinuousClock.now + .seconds(20)
        while try item(store, titled: "Woken") == nil {
            guard ContinuousClock.now < deadline else {
                Issue.record("the follower did not take the server's insert within 20 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        follower.cancel()
        _ = await follower.result
        _ = try await replicator.push()
        try expectSame(store, database)
    }

    /// A server's row the store refuses (a required title missing) is left out by name while
    /// the rest of the pull flows on: deleted in PostgreSQL, its values kept in `strata_rejects`
    /// (decision 111). Before, the whole pull failed until someone fixed the row.
    @Test func aRowTheStoreRefusesIsLeftOutAndRecorded() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        // A title is required in the store.
        _ = try sql("INSERT INTO \"Item\" (amount, quantity) VALUES (1, 1)", database)
        _ = try sql("INSERT INTO \"Item\" (title) VALUES ('Beside it')", database)
        let (pulled, _) = try await replicator.exchange()
        #expect(pulled.refusals.count == 1 && pulled.refusals.first?.row.entity == "Item", "\(pulled.refusals)")
        if case .invalid(let message)? = pulled.refusals.first?.reason {
            #expect(message.contains("title"), "\(message)")
        }
        #expect(try item(store, titled: "Beside it") != nil)
        #expect(try sql("SELECT count(*) FROM \"Item\" WHERE title IS NULL", database) == "0")
        #expect(try sql("SELECT count(*) FROM strata_rejects WHERE tbl = 'Item' AND kind = 'invalid' "
            + "AND row->>'amount' = '1'", database) == "1")
        try expectSame(store, database)
    }
}
