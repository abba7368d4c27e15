import Foundation
@testable import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// A pull against a server application that keeps writing: between the pull's read and the
/// push that follows it, while rows are being keyed, with another pull at once, with a
/// session of its own search path and rights, and against tables made by an older replicator.
/// Each case is a way the pull once lost or undid a server's write.
extension PullTests {
    // MARK: The push after a pull

    /// The push carries what the store computed from a pull (derived values, defaults,
    /// cascades), not the server's own values back: a write the server made after the pull
    /// read its rows stays.
    @Test func aServerWriteAfterThePullIsNotUndoneByThePush() async throws {
        let (store, database, replicator, lists, _) = try await replicated()
        defer { try? store.close() }
        let item = try #require(try item(store, titled: "Item 3"))
        let pk = item.primaryKey
        _ = try sql("UPDATE \"Item\" SET title = 'First', list = \(lists[1].primaryKey) WHERE pk = \(pk)", database)
        _ = try await replicator.pull()
        #expect(try store.read { try $0.values(of: item)?["title"] } == .string("First"))
        _ = try sql("UPDATE \"Item\" SET title = 'Second', list = \(lists[2].primaryKey) WHERE pk = \(pk)", database)
        let pushed = try await replicator.push()
        #expect(pushed.transactions == 1)
        #expect(try sql("SELECT title || '/' || list FROM \"Item\" WHERE pk = \(pk)", database)
            == "Second/\(lists[2].primaryKey)")
        // The derived values the pull moved went out: the item's copy of its list's name.
        #expect(try sql("SELECT \"listName\" FROM \"Item\" WHERE pk = \(pk)", database) == "List 1")
        _ = try await replicator.exchange()
        #expect(try store.read { try $0.values(of: item)?["title"] } == .string("Second"))
        #expect(try store.read { try $0.target(of: "list", of: item) } == lists[2])
        try expectSame(store, database)
    }

    @Test func aRowTheServerDeletesAfterThePullStaysDeleted() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        _ = try sql("INSERT INTO \"Item\" (title) VALUES ('Brief')", database)
        _ = try await replicator.pull()
        let item = try #require(try item(store, titled: "Brief"))
        _ = try sql("DELETE FROM \"Item\" WHERE pk = \(item.primaryKey)", database)
        _ = try await replicator.push()
        #expect(try sql("SELECT count(*) FROM \"Item\" WHERE pk = \(item.primaryKey)", database) == "0")
        _ = try await replicator.exchange()
        #expect(try self.item(store, titled: "Brief") == nil)
        try expectSame(store, database)
    }

    /// A row the server inserted with columns left NULL takes the model's defaults in the
    /// store, and they go to PostgreSQL — where the server has not written the column since.
    @Test func defaultsFillOnlyWhatTheServerLeftEmpty() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        _ = try sql("INSERT INTO \"Item\" (title) VALUES ('Defaults')", database)
        _ = try await replicator.pull()
        let item = try #require(try item(store, titled: "Defaults"))
        #expect(try store.read { try $0.values(of: item)?["quantity"] } == .int(1))
        _ = try sql("UPDATE \"Item\" SET quantity = 5 WHERE pk = \(item.primaryKey)", database)
        _ = try await replicator.push()
        #expect(try sql("SELECT amount || '/' || quantity FROM \"Item\" WHERE pk = \(item.primaryKey)", database) == "0/5")
        _ = try await replicator.exchange()
        #expect(try store.read { try $0.values(of: item)?["quantity"] } == .int(5))
        try expectSame(store, database)
    }

    @Test func aLinkTheServerBreaksAfterThePullStaysBroken() async throws {
        let (store, database, replicator, lists, tags) = try await replicated()
        defer { try? store.close() }
        let link = "(\(tags[1].primaryKey), \(lists[1].primaryKey))"
        _ = try sql("INSERT INTO \"Tag_lists\" (source, target) VALUES \(link)", database)
        _ = try await replicator.pull()
        #expect(try store.read { try $0.members(of: "lists", of: tags[1]) } == [lists[1]])
        _ = try sql("DELETE FROM \"Tag_lists\" WHERE (source, target) = \(link)", database)
        _ = try await replicator.push()
        #expect(try sql("SELECT count(*) FROM \"Tag_lists\" WHERE (source, target) = \(link)", database) == "0")
        _ = try await replicator.exchange()
        #expect(try store.read { try $0.members(of: "lists", of: tags[1]) }.isEmpty)
        try expectSame(store, database)
    }

    /// The store's change not pushed yet points at a row the server deleted: the push goes
    /// through (the reference as PostgreSQL's ON DELETE would have left it), and the pull
    /// that follows applies the deletion in the store, with the store's rules.
    @Test func aStoreReferenceToARowTheServerDeletedDoesNotStopThePush() async throws {
        let (store, database, replicator, lists, tags) = try await replicated()
        defer { try? store.close() }
        let item = try #require(try item(store, titled: "Item 0"))
        try await store.write { tx in
            try tx.set("list", of: item, to: lists[2])
            try tx.add(lists[2], to: "lists", of: tags[1])
        }
        _ = try sql("DELETE FROM \"TodoList\" WHERE pk = \(lists[2].primaryKey)", database)
        let pushed = try await replicator.push()
        #expect(pushed.transactions == 1)
        _ = try await replicator.exchange()
        #expect(try store.read { try $0.values(of: lists[2]) } == nil)
        #expect(try store.read { try $0.members(of: "lists", of: tags[1]) }.isEmpty)
        try expectSame(store, database)
    }

    // MARK: Interrupted and concurrent pulls

    /// A link the server makes to a row it inserted, between the pull's claim and its keys,
    /// names the row by the server's key: it must follow the row to its store key.
    @Test func aChangeMadeWhileRowsAreKeyedFollowsTheirKeys() async throws {
        let (store, database, replicator, _, tags) = try await replicated()
        defer { try? store.close() }
        let connection = try await replicator.connect()
        defer { connection.close() }
        _ = try sql("INSERT INTO \"TodoList\" (name) VALUES ('Keyed')", database)
        try await pullUntilTheStoreCommits(replicator, on: connection) {
            _ = try sql("INSERT INTO \"Tag_lists\" SELECT \(tags[1].primaryKey), pk FROM \"TodoList\" WHERE name = 'Keyed'", database)
        }
        _ = try await replicator.exchange()
        let list = try #require(try store.read { reader in
            try reader.objects("TodoList").first { try reader.values(of: $0)?["name"] == .string("Keyed") }
        })
        #expect(try store.read { try $0.members(of: "lists", of: tags[1]) } == [list])
        try expectSame(store, database)
    }

    /// Interrupted after the store committed: the rewrite of the derived columns the server
    /// wrote over is not lost with the process.
    @Test func anInterruptedPullStillRewritesTheDerivedColumnsTheServerWrote() async throws {
        let (store, database, replicator, lists, _) = try await replicated()
        defer { try? store.close() }
        let connection = try await replicator.connect()
        defer { connection.close() }
        _ = try sql("UPDATE \"TodoList\" SET \"itemCount\" = 999, budget = 12 WHERE pk = \(lists[1].primaryKey)", database)
        try await pullUntilTheStoreCommits(replicator, on: connection)
        _ = try await replicator.exchange()
        #expect(try sql("SELECT \"itemCount\" FROM \"TodoList\" WHERE pk = \(lists[1].primaryKey)", database) == "4")
        try expectSame(store, database)
    }

    /// Two pulls that died holding claims (only one claim is recorded per replication): the
    /// next pull takes both claims' changes again.
    @Test func claimsLeftByPullsThatDiedAreTakenAgain() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let first = try await replicator.connect()
        let second = try await replicator.connect()
        defer {
            first.close()
            second.close()
        }
        _ = try sql("INSERT INTO \"TodoList\" (name) VALUES ('One')", database)
        _ = try #require(try await replicator.claimChanges(on: first))
        _ = try sql("INSERT INTO \"TodoList\" (name) VALUES ('Two')", database)
        _ = try #require(try await replicator.claimChanges(on: second))
        _ = try await replicator.exchange()
        let names = try store.read { reader in try reader.objects("TodoList").compactMap { try reader.values(of: $0)?["name"] } }
        #expect(names.filter { $0 == .string("One") || $0 == .string("Two") }.count == 2, "\(names)")
        try expectSame(store, database)
    }

    @Test func twoExchangesAtOnceTakeEachChangeOnce() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let other = PostgresReplicator(store: store, destination: replicator.destination)
        for round in 0..<6 {
            _ = try sql("INSERT INTO \"TodoList\" (name) VALUES ('Concurrent \(round)');"
                + "UPDATE \"Item\" SET quantity = \(round + 2) WHERE title = 'Item \(round)'", database)
            async let one = replicator.exchange()
            async let two = other.exchange()
            _ = try await (one, two)
        }
        _ = try await replicator.exchange()
        let names = try store.read { reader in
            try reader.objects("TodoList").compactMap { try reader.values(of: $0)?["name"]?.stringValue }
        }
        #expect(names.filter { $0.hasPrefix("Concurrent") }.sorted() == (0..<6).map { "Concurrent \($0)" }, "\(names)")
        try expectSame(store, database)
    }

    // MARK: The server's sessions and tables

    /// The triggers record a change whatever the writing session's search path, and whatever
    /// its rights on the replicator's own tables (it needs none).
    @Test func aServerSessionWithItsOwnSearchPathAndFewRightsIsRecorded() async throws {
        let (store, database, replicator, _, _) = try await replicated()
        defer { try? store.close() }
        let item = try #require(try item(store, titled: "Item 1"))
        _ = try sql("""
            DO $$ BEGIN CREATE ROLE strata_app; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
            GRANT USAGE ON SCHEMA public TO strata_app;
            GRANT SELECT, INSERT, UPDATE, DELETE ON "Item" TO strata_app;
            CREATE SCHEMA elsewhere;
            CREATE TABLE elsewhere.strata_changes (seq bigserial PRIMARY KEY, tbl text, pk bigint, other bigint,
                op text, cols text[], claim bigint);
            GRANT USAGE ON SCHEMA elsewhere TO strata_app;
            GRANT ALL ON ALL TABLES IN SCHEMA elsewhere TO strata_app;
            GRANT ALL ON ALL SEQUENCES IN SCHEMA elsewhere TO strata_app;
            """, database)
        _ = try sql("SET ROLE strata_app; SET search_path TO elsewhere; "
            + "UPDATE public.\"Item\" SET title = 'By the app' WHERE pk = \(item.primaryKey)", database)
        _ = try await replicator.exchange()
        #expect(try store.read { try $0.values(of: item)?["title"] } == .string("By the app"))
        #expect(try sql("SELECT count(*) FROM elsewhere.strata_changes", database) == "0")
        try expectSame(store, database)
    }

    /// `TRUNCATE` fires no row trigger: the server's is refused (it would never reach the
    /// store); the replicator's own (a copy after purged history) goes through.
    @Test func aTruncateOnTheServerIsRefused() async throws {
        let (store, database, replicator, lists, _) = try await replicated()
        defer { try? store.close() }
        #expect(throws: (any Error).self) { try sql("TRUNCATE \"Tag_lists\"", database) }
        #expect(try sql("SELECT count(*) FROM \"Tag_lists\"", database) == "2")
        // The store's history PostgreSQL has not seen is purged: the pull pushes first, which
        // copies the store (its TRUNCATE goes through).
        try await store.write { tx in try tx.update(lists[0], ["name": "Purged"]) }
        _ = try store.purgeHistory(through: try store.lastHistoryToken())
        _ = try await replicator.exchange()
        #expect(try sql("SELECT name FROM \"TodoList\" WHERE pk = \(lists[0].primaryKey)", database) == "Purged")
        try expectSame(store, database)
    }

    /// A pull whose conflict check needs history the store purged: the push copies the store
    /// first (its snapshot wins, as documented), and the pull goes on.
    @Test func aPullAfterPurgedHistoryGoesOn() async throws {
        let (store, database, replicator, lists, _) = try await replicated()
        defer { try? store.close() }
        try await store.write { tx in try tx.update(lists[0], ["name": "Purged"]) }
        _ = try store.purgeHistory(through: try store.lastHistoryToken())
        _ = try sql("INSERT INTO \"TodoList\" (name) VALUES ('After the purge')", database)
        _ = try await replicator.exchange()
        try expectSame(store, database)
        try await store.write { tx in try tx.update(lists[1], ["name": "Later"]) }
        _ = try sql("UPDATE \"TodoList\" SET budget = 3 WHERE pk = \(lists[2].primaryKey)", database)
        _ = try await replicator.exchange()
        #expect(try store.read { try $0.values(of: lists[2])?["budget"] } == .decimal(3))
        try expectSame(store, database)
    }

    /// Tables an older replicator made have foreign keys without `ON UPDATE CASCADE`, which
    /// keying needs: the pull mends them.
    @Test func foreignKeysWithoutUpdateCascadeAreMended() async throws {
        let (store, database, replicator, _, tags) = try await replicated()
        defer { try? store.close() }
        _ = try sql("""
            ALTER TABLE "Item" DROP CONSTRAINT "strata_fk_Item_list", ADD CONSTRAINT "strata_fk_Item_list"
                FOREIGN KEY (list) REFERENCES "TodoList" (pk) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED;
            ALTER TABLE "Tag_lists" DROP CONSTRAINT "Tag_lists_target_fkey", ADD CONSTRAINT "Tag_lists_target_fkey"
                FOREIGN KEY (target) REFERENCES "TodoList" (pk) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;
            """, database)
        _ = try sql("""
            BEGIN;
            INSERT INTO "TodoList" (name) VALUES ('Mended');
            INSERT INTO "Item" (title, list) VALUES ('Mended item', currval('"strata_key_TodoList"'));
            INSERT INTO "Tag_lists" (source, target) VALUES (\(tags[1].primaryKey), currval('"strata_key_TodoList"'));
            COMMIT;
            """, database)
        _ = try await replicator.exchange()
        let item = try #require(try item(store, titled: "Mended item"))
        #expect(try store.read { try $0.target(of: "list", of: item) } != nil)
        #expect(try sql("SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND confupdtype <> 'c' "
            + "AND conrelid IN ('\"Item\"'::regclass, '\"Tag_lists\"'::regclass)", database) == "0")
        try expectSame(store, database)
    }
}
