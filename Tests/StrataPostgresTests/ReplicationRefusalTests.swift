import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Synchronization
import Testing

/// Rows a pull refuses because they break the model (decision 111): a unique value two stores
/// gave at once goes to the row with the smaller key in every store, and a server
/// application's row that breaks a rule is left out (deleted, or its change undone) while the
/// rest of the pull flows on, each decision recorded in `strata_rejects`.
@Suite(.serialized) struct ReplicationRefusalTests {
    /// Stores of the to-do model replicating into fresh databases of the throwaway cluster.
    let fixture: DatasetJoinTests
    var cluster: PostgresCluster { fixture.cluster }

    init() throws { fixture = try DatasetJoinTests() }

    func makeStore(_ file: String) throws -> RecordStore { try fixture.makeStore(file) }

    func replicator(_ store: RecordStore, _ url: String, name: String) throws -> PostgresReplicator {
        try fixture.replicator(store, url, name: name)
    }

    func sql(_ statement: String, _ database: String) throws -> String { try fixture.sql(statement, database) }

    func tags(labelled label: String, in store: RecordStore) throws -> [ObjectID] {
        try store.read { reader in
            try reader.objects("Tag").filter { try reader.values(of: $0)?["label"] == .string(label) }
        }
    }

    func expectConverged(_ stores: [RecordStore], _ database: String, _ label: String,
                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let inPostgres = try ReplicatedContent.ofDatabase(database, in: cluster, model: stores[0].model)
        for store in stores {
            let content = try ReplicatedContent.ofStore(store)
            #expect(content == inPostgres, "\(label): \(ReplicatedContent.difference(content, inPostgres))",
                    sourceLocation: sourceLocation)
            #expect(try store.read { try $0.checkRecords() } == [], sourceLocation: sourceLocation)
        }
    }

    /// Both stores insert a tag labelled "urgent" (unique) and push before either pulls: every
    /// pull keeps the tag with the smaller key (the first store's range) and deletes the other,
    /// links included; each store's pull after that brings nothing, and the decision is recorded
    /// once, with the deleted row's values.
    @Test(arguments: [false, true]) func aUniqueValueTwoStoresGaveGoesToTheSmallerKey(secondPullsFirst: Bool) async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("dup-a-\(secondPullsFirst)")
        defer { try? a.close() }
        let (lists, _) = try ReplicationTests.fill(a)
        let one = try replicator(a, url, name: "a")
        _ = try await one.exchange()
        let b = try makeStore("dup-b-\(secondPullsFirst)")
        defer { try? b.close() }
        let two = try replicator(b, url, name: "b")
        _ = try await two.exchange()

        let inA = try await a.write { tx in
            let tag = try tx.insert("Tag", ["label": "urgent", "score": 1])
            try tx.add(lists[0], to: "lists", of: tag)
            return tag
        }
        let inB = try await b.write { tx in
            let tag = try tx.insert("Tag", ["label": "urgent", "score": 2])
            try tx.add(lists[1], to: "lists", of: tag)
            return tag
        }
        #expect(inA.primaryKey < inB.primaryKey)
        _ = try await one.push()
        _ = try await two.push()
        #expect(try sql("SELECT count(*) FROM \"Tag\" WHERE label = 'urgent'", database) == "2")

        let order = secondPullsFirst ? [(b, two), (a, one), (b, two), (a, one)] : [(a, one), (b, two), (a, one), (b, two)]
        var refusals: [ReplicationRefusal] = []
        for (_, replicator) in order {
            let (pulled, _) = try await replicator.exchange()
            refusals += pulled.refusals
        }
        // Decided once, by whichever store pulled first: the other finds it done.
        #expect(refusals.count == 1, "\(refusals)")
        #expect(refusals.first?.row == inB && refusals.first?.outcome == .deleted, "\(refusals)")
        #expect(refusals.first?.reason == .duplicate(constraint: ["label"], keptBy: inA))
        for store in [a, b] {
            #expect(try tags(labelled: "urgent", in: store) == [inA])
            let linked = try store.read { try $0.members(of: "lists", of: inA) }
            #expect(linked == [lists[0]])
        }
        try expectConverged([a, b], database, "after the duplicates")
        let recorded = try await one.refusals()
        #expect(recorded.count == 1 && recorded.first?.row == inB, "\(recorded)")
        #expect(recorded.first?.values?.contains("\"score\"") == true, "\(recorded)")
        #expect(recorded.first?.date != nil)
        // Nothing is left to decide or to apply.
        #expect(try await one.exchange().pulled.rowsApplied == 0)
        #expect(try await two.exchange().pulled.rowsApplied == 0)
        #expect(try sql("SELECT count(*) FROM strata_changes", database) == "0")
    }

    /// A server application's rows that break the model: an item without its required title, a
    /// tag under a label a store's tag holds, and a change that clears a required title. The
    /// pull applies the good rows and refuses each bad one by name: the inserts are deleted in
    /// PostgreSQL, the change is undone there, and every refusal is in `strata_rejects`.
    @Test func aServersRowsThatBreakTheModelAreRefusedOneByOne() async throws {
        let (database, url) = try cluster.makeDatabase()
        let a = try makeStore("server-a")
        defer { try? a.close() }
        let (lists, tagIDs) = try ReplicationTests.fill(a)
        let one = try replicator(a, url, name: "a")
        _ = try await one.exchange()
        let takenLabel = try a.read { try $0.values(of: tagIDs[0])?["label"] }
        guard case .string(let taken)? = takenLabel else { Issue.record("no label"); return }
        let item = try a.read { try $0.objects("Item")[0] }
        let title = try a.read { try $0.values(of: item)?["title"] }

        let list = lists[0].primaryKey
        _ = try sql("INSERT INTO \"Item\" (title, list) VALUES ('good', \(list))", database)
        _ = try sql("INSERT INTO \"Item\" (amount, list) VALUES (3, \(list))", database)
        _ = try sql("INSERT INTO \"Tag\" (label) VALUES ('\(taken)')", database)
        _ = try sql("INSERT INTO \"Tag\" (label) VALUES ('fresh')", database)
        _ = try sql("UPDATE \"Item\" SET title = NULL WHERE pk = \(item.primaryKey)", database)
        let (pulled, _) = try await one.exchange()

        #expect(pulled.refusals.count == 3, "\(pulled.refusals)")
        let outcomes = Dictionary(pulled.refusals.map { ($0.row.entity + ($0.outcome == .restored ? "-restored" : "-deleted"), $0) },
                                  uniquingKeysWith: { first, _ in first })
        #expect(outcomes["Item-restored"]?.row == item, "\(pulled.refusals)")
        if case .invalid(let message)? = outcomes["Item-deleted"]?.reason {
            #expect(message.contains("title"), "\(message)")
        } else {
            Issue.record("the item without a title: \(pulled.refusals)")
        }
        if case .duplicate(let constraint, let keptBy)? = outcomes["Tag-deleted"]?.reason {
            #expect(constraint == ["label"] && keptBy == tagIDs[0])
        } else {
            Issue.record("the duplicate tag: \(pulled.refusals)")
        }
        // The good rows flowed on; the bad ones are gone or undone in PostgreSQL too.
        #expect(try sql("SELECT count(*) FROM \"Item\" WHERE title = 'good'", database) == "1")
        #expect(try sql("SELECT count(*) FROM \"Item\" WHERE title IS NULL", database) == "0")
        #expect(try sql("SELECT count(*) FROM \"Tag\" WHERE label = '\(taken)'", database) == "1")
        #expect(try sql("SELECT count(*) FROM \"Tag\" WHERE label = 'fresh'", database) == "1")
        #expect(try a.read { try $0.values(of: item)?["title"] } == title)
        #expect(try tags(labelled: "fresh", in: a).count == 1)
        try expectConverged([a], database, "after the refusals")
        #expect(try sql("SELECT count(*) FROM strata_rejects", database) == "3")
        let recorded = try await one.refusals()
        #expect(Set(recorded.map(\.row)) == Set(pulled.refusals.map(\.row)), "\(recorded)")
        // The refusals are not applied again.
        #expect(try await one.exchange().pulled.refusals.isEmpty)
    }
}

/// A property two stores change at once (decision 111): the store that has not pushed keeps its
/// value at its pull and reports the conflict with both values; the other store's pull reports
/// its write as overwritten; a resolver's value is kept, pushed, and taken by the other store.
@Suite(.serialized) struct ReplicationConflictTests {
    let base: DatasetJoinTests

    init() throws { base = try DatasetJoinTests() }

    func name(of list: ObjectID, in store: RecordStore) throws -> StoredValue? {
        try store.read { try $0.values(of: list)?["name"] }
    }

    @Test func bothStoresAreToldWhoseWriteWon() async throws {
        let (database, url) = try base.cluster.makeDatabase()
        let a = try base.makeStore("conflict-a")
        defer { try? a.close() }
        let (lists, _) = try ReplicationTests.fill(a)
        let one = try base.replicator(a, url, name: "a")
        _ = try await one.exchange()
        let b = try base.makeStore("conflict-b")
        defer { try? b.close() }
        let two = try base.replicator(b, url, name: "b")
        _ = try await two.exchange()
        let list = lists[0]

        try await a.write { tx in try tx.update(list, ["name": "A's name"]) }
        try await b.write { tx in try tx.update(list, ["name": "B's name"]) }
        _ = try await one.push()
        // B has not pushed: its value stays, and its pull says over whose.
        let (pulledByB, _) = try await two.exchange()
        #expect(pulledByB.conflictDetails == [ReplicationConflict(
            row: list, property: "name", storeValue: .string("B's name"), otherValue: .string("A's name"),
            otherWriter: "a", outcome: .keptStoreValue)], "\(pulledByB.conflictDetails)")
        // A pushed first: its write lost, and its pull says so.
        let (pulledByA, _) = try await one.exchange()
        #expect(pulledByA.conflictDetails == [ReplicationConflict(
            row: list, property: "name", storeValue: .string("A's name"), otherValue: .string("B's name"),
            otherWriter: "b", outcome: .overwritten)], "\(pulledByA.conflictDetails)")
        #expect(try name(of: list, in: a) == .string("B's name") && name(of: list, in: b) == .string("B's name"))
        #expect(try base.sql("SELECT name FROM \"TodoList\" WHERE pk = \(list.primaryKey)", database) == "B's name")
        // Nothing more to tell.
        #expect(try await one.exchange().pulled.conflictDetails.isEmpty)
        #expect(try await two.exchange().pulled.conflictDetails.isEmpty)
    }

    /// The store commits a change of the property between the pull's read of PostgreSQL and its
    /// apply: the pull must see it as the store's (its value stays and is pushed), not write the
    /// other store's over it — which the push would then leave out, leaving the store alone
    /// with another value than PostgreSQL (what `strata-harness converge` once ended with).
    @Test func aChangeTheStoreCommitsWhileAPullRunsIsNotWrittenOver() async throws {
        let (database, url) = try base.cluster.makeDatabase()
        let a = try base.makeStore("late-a")
        defer { try? a.close() }
        let (lists, _) = try ReplicationTests.fill(a)
        let one = try base.replicator(a, url, name: "a")
        _ = try await one.exchange()
        let b = try base.makeStore("late-b")
        defer { try? b.close() }
        let two = try base.replicator(b, url, name: "b")
        _ = try await two.exchange()
        let list = lists[2]
        try await a.write { tx in try tx.update(list, ["name": "A's name"]) }
        _ = try await one.push()
        two.beforeApplying.withLock { hook in
            hook = { try b.write { tx in try tx.update(list, ["name": "B's late name"]) } }
        }
        let (pulled, _) = try await two.exchange()
        two.beforeApplying.withLock { $0 = nil }
        #expect(pulled.conflicts == 1, "\(pulled)")
        _ = try await one.exchange()
        for store in [a, b] { #expect(try name(of: list, in: store) == .string("B's late name")) }
        #expect(try base.sql("SELECT name FROM \"TodoList\" WHERE pk = \(list.primaryKey)", database) == "B's late name")
    }

    @Test func aResolversValueIsKeptAndReachesTheOthers() async throws {
        let (database, url) = try base.cluster.makeDatabase()
        let a = try base.makeStore("resolve-a")
        defer { try? a.close() }
        let (lists, _) = try ReplicationTests.fill(a)
        let one = try base.replicator(a, url, name: "a")
        _ = try await one.exchange()
        let b = try base.makeStore("resolve-b")
        defer { try? b.close() }
        let two = PostgresReplicator(
            store: b, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": base.cluster.password]),
            name: "b", resolveConflict: { conflict in
                guard case .string(let mine) = conflict.storeValue, case .string(let theirs) = conflict.otherValue else { return nil }
                return .string([mine, theirs].sorted().joined(separator: " + "))
            })
        _ = try await two.exchange()
        let list = lists[1]
        try await a.write { tx in try tx.update(list, ["name": "from A"]) }
        try await b.write { tx in try tx.update(list, ["name": "from B"]) }
        _ = try await one.push()
        let (pulled, pushed) = try await two.exchange()
        #expect(pulled.conflictDetails.map(\.outcome) == [.resolved(.string("from A + from B"))], "\(pulled.conflictDetails)")
        #expect(pushed.transactions >= 2, "\(pushed)")
        _ = try await one.exchange()
        for store in [a, b] { #expect(try name(of: list, in: store) == .string("from A + from B")) }
        #expect(try base.sql("SELECT name FROM \"TodoList\" WHERE pk = \(list.primaryKey)", database) == "from A + from B")
        let inA = try ReplicatedContent.ofStore(a), inB = try ReplicatedContent.ofStore(b)
        #expect(inA == inB, "\(ReplicatedContent.difference(inA, inB))")
    }
}
