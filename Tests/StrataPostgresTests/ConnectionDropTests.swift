import Foundation
@testable import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Synchronization
import Testing

/// The network dropping in the middle of a replication ("a clear error, nothing
/// half-applied on either side, resumable"): pushes go through a ``TCPProxy`` that resets the
/// connection after a seeded number of bytes; PostgreSQL, read directly with `psql`, must then
/// hold whole Strata transactions up to its stored token and nothing after, and the next push
/// (or `follow`'s reconnection) must finish the job.
///
/// The seed is random each run and printed with every failure; `STRATA_SEED=N` replays one.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ConnectionDropTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init)
        ?? UInt64.random(in: 0...UInt64.max)
    static var label: String { "seed \(seed) (rerun with STRATA_SEED=\(seed))" }
    /// What a hang here would mean: a statement the replicator sent after a drop (a ROLLBACK,
    /// the next round's) waiting forever instead of failing.
    static let hangHint = "a statement sent on a dropped connection was never answered"

    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-drop-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func makeStore() throws -> RecordStore {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        return try RecordStore(path: directory + "/todo.strata", model: try todoModel(), options: options, history: .on)
    }

    func destination(_ url: String) throws -> PostgresDestination {
        try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password])
    }

    // MARK: Tests

    /// A history of 120 transactions pushed into one database through the proxy, cut five times
    /// at seeded byte counts (the first within the login and the tables' checks, the others
    /// anywhere in a quarter of the whole push): after each cut PostgreSQL holds whole
    /// transactions up to its token and the next push goes on from there; a last push, uncut,
    /// finishes.
    @Test func dropsMidPushLeaveWholeTransactionsAndThePushResumes() async throws {
        var random = SplitMix64(seed: mixSeed(Self.seed, 1))
        let store = try makeStore()
        defer { try? store.close() }
        var writer = try HistoryWriter(store: store, seed: mixSeed(Self.seed, 2))
        // Both databases get the store's first state by a plain copy, so that what goes
        // through the proxy afterwards is the history, transaction by transaction.
        let reference = try cluster.makeDatabase(), (database, url) = try cluster.makeDatabase()
        for url in [reference.url, url] {
            #expect(try await PostgresReplicator(store: store, destination: try destination(url)).push().copiedAll)
        }
        let copied = writer.written.count
        for _ in 0..<120 { try writer.transaction() }
        #expect(try HistoryWriter.content(of: store) == writer.written.content(after: writer.written.count),
                "\(Self.label): the test's account of its writes must match the store, or its checks mean nothing")

        let proxy = try TCPProxy(targetPort: cluster.port)
        defer { proxy.stop() }
        // The whole push through the proxy, uncut, into the reference: its size in bytes, and
        // how long a push may take before it counts as hung.
        let sent = proxy.bytesToServer
        let whole = try await PostgresReplicator(store: store, destination: try destination(proxy.proxied(reference.url)))
            .push()
        let size = proxy.bytesToServer - sent
        let patience = Duration.seconds(3 + 2 * whole.seconds)
        #expect(whole.transactions == 120 && !whole.copiedAll, "\(Self.label): \(whole)")
        #expect(try ReplicatedContent.ofDatabase(reference.name, in: cluster, model: store.model)
            == ReplicatedContent.ofStore(store), "\(Self.label): the push through the proxy, uncut")

        let replicator = PostgresReplicator(store: store, destination: try destination(proxy.proxied(url)))
        var applied = copied
        for round in 1...5 {
            let cut = round == 1 ? random.int(1...2_000) : random.int(2_000...(size / 4))
            let context = "\(Self.label), round \(round), cut after \(cut) bytes (a whole push is \(size))"
            proxy.cutAfter(bytes: cut)
            let outcome = await Self.outcome(within: patience) { try await replicator.push() }
            let didCut = !proxy.isArmed
            proxy.disarm()
            var hung = false
            switch outcome {
            case nil:
                hung = true
                Issue.record("\(context): no answer within \(patience) of the drop (\(Self.hangHint))")
            case .failure(let error)?:
                checkDropError(error, context)
                #expect(didCut, "\(context): the push failed without a cut: \(error)")
            case .success?:
                // The rest of the history took fewer bytes than the cut: the check below still holds.
                break
            }
            try await waitForOtherSessions(on: database, context)
            let now = try checkWholeTransactions(in: database, written: writer.written, atLeast: applied, context)
            applied = max(applied, now)
            // A hang is the failure already recorded; more rounds would only wait for more hangs.
            if hung || applied == writer.written.count { break }
        }

        let last = await Self.outcome(within: patience) { try await replicator.push() }
        guard case .success(let report)? = last else {
            Issue.record("\(Self.label): the push after the cuts: \(last.map { "\($0)" } ?? "no answer within \(patience)")")
            return
        }
        #expect(!report.copiedAll && report.transactions == writer.written.count - applied,
                "\(Self.label): \(applied) of \(writer.written.count) were applied before the last push: \(report)")
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model)
            == ReplicatedContent.ofStore(store), "\(Self.label)")
        #expect(try storedToken(in: database) == store.lastHistoryToken(), "\(Self.label)")
    }

    /// The first push copies the store in one PostgreSQL transaction: cut in it, nothing of it
    /// remains (no token, no rows) and the next push copies afresh.
    @Test func aDropDuringTheFirstCopyLeavesNothingAndTheNextPushCopies() async throws {
        var random = SplitMix64(seed: mixSeed(Self.seed, 3))
        let store = try makeStore()
        defer { try? store.close() }
        var writer = try HistoryWriter(store: store, seed: mixSeed(Self.seed, 4))
        for _ in 0..<60 { try writer.transaction() }
        let proxy = try TCPProxy(targetPort: cluster.port)
        defer { proxy.stop() }
        let reference = try cluster.makeDatabase()
        let sent = proxy.bytesToServer
        let whole = try await PostgresReplicator(store: store, destination: try destination(proxy.proxied(reference.url)))
            .push()
        #expect(whole.copiedAll, "\(Self.label): \(whole)")
        let size = proxy.bytesToServer - sent
        let patience = Duration.seconds(3 + 2 * whole.seconds)

        let (database, url) = try cluster.makeDatabase()
        // Past the tables' preparation (a small part of a copy's bytes), before its COMMIT.
        let cut = random.int((size / 2)...(size - 200))
        let context = "\(Self.label), cut after \(cut) bytes (a whole copy is \(size))"
        let replicator = PostgresReplicator(store: store, destination: try destination(proxy.proxied(url)))
        proxy.cutAfter(bytes: cut)
        switch await Self.outcome(within: patience, { try await replicator.push() }) {
        case nil: Issue.record("\(context): no answer within \(patience) of the drop (\(Self.hangHint))")
        case .failure(let error)?: checkDropError(error, context)
        case .success(let report)?: Issue.record("\(context): the copy finished anyway: \(report)")
        }
        proxy.disarm()
        try await waitForOtherSessions(on: database, context)
        #expect(try storedToken(in: database) == nil, "\(context)")
        for entity in ["TodoList", "Item", "Tag"] {
            let exists = try cluster.psql("SELECT to_regclass('public.\"\(entity)\"') IS NOT NULL", database: database)
            if exists.hasPrefix("t") {
                #expect(try cluster.psql("SELECT count(*) FROM \"\(entity)\"", database: database) == "0\n", "\(context)")
            }
        }
        guard case .success(let again)? = await Self.outcome(within: patience, { try await replicator.push() }) else {
            Issue.record("\(context): the push after the cut failed or hung")
            return
        }
        #expect(again.copiedAll, "\(context): \(again)")
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model)
            == ReplicatedContent.ofStore(store), "\(context)")
    }

    /// `follow` reconnects after a cut in the middle of catching up, and after one while it
    /// waited for commits, and catches up with what was committed meanwhile.
    /// PostgreSQL stopped as a crash would stop it and started again while a follower waits:
    /// the follower's logins may meet a server still replaying its log ("not yet accepting
    /// connections"), which is a server that cannot take a connection yet, not a login refused;
    /// it tries again and pushes what the store commits after.
    @Test func followRidesOutARestartOfPostgreSQL() async throws {
        let own = try PostgresCluster.privateCluster()
        defer { own.stop() }
        let store = try makeStore()
        defer { try? store.close() }
        var writer = try HistoryWriter(store: store, seed: mixSeed(Self.seed, 9))
        let (database, url) = try own.makeDatabase()
        let destination = try PostgresDestination(url: url, environment: ["PGPASSWORD": own.password])
        #expect(try await PostgresReplicator(store: store, destination: destination).push().copiedAll)
        let progress = FollowProgress()
        let follower = Task {
            do {
                try await PostgresReplicator(store: store, destination: destination).follow(retries: 10) { progress.record($0) }
                progress.finish(nil)
            } catch {
                progress.finish(error)
            }
        }
        defer { follower.cancel() }
        for _ in 0..<5 { try writer.transaction() }
        let first = try store.lastHistoryToken()
        guard await progress.wait(within: .seconds(10), until: { $0.last >= first || $0.finished }) else {
            Issue.record("\(Self.label): follow did not push the first transactions within 10 s")
            return
        }
        try own.restart()
        let target = HistoryToken(first.value + 20)
        progress.stop(at: target)
        for _ in 0..<20 { try writer.transaction() }
        guard await progress.wait(within: .seconds(20), until: \.finished) else {
            Issue.record("\(Self.label): follow did not reach \(target) within 20 s of a restart: it reported \(progress.last)")
            return
        }
        if let error = progress.error { Issue.record("\(Self.label): follow failed after the restart: \(error)") }
        #expect(try ReplicatedContent.ofDatabase(database, in: own, model: store.model) == ReplicatedContent.ofStore(store),
                "\(Self.label)")
    }

    /// What a login that fails says decides whether a follower tries again.
    @Test func aServerThatCannotTakeConnectionsYetIsNotALoginRefused() throws {
        let destination = try PostgresDestination(url: "postgres://strata@127.0.0.1:5432/db", environment: [:])
        for busy in ["the database system is starting up",
                     "the database system is not yet accepting connections\nDETAIL:  Consistent recovery state has not been yet reached.",
                     "the database system is shutting down", "sorry, too many clients already",
                     "the database system is in recovery mode"] {
            let error = destination.connectError("connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  \(busy)")
            guard case .connectionFailed = error else {
                Issue.record("\(busy): \(error)")
                continue
            }
        }
        let refused = destination.connectError("connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  password "
                                               + "authentication failed for user \"strata\"")
        guard case .loginRefused = refused else {
            Issue.record("a wrong password: \(refused)")
            return
        }
    }

    @Test func followReconnectsAfterDropsAndCatchesUp() async throws {
        var random = SplitMix64(seed: mixSeed(Self.seed, 5))
        let store = try makeStore()
        defer { try? store.close() }
        var writer = try HistoryWriter(store: store, seed: mixSeed(Self.seed, 6))
        let (database, url) = try cluster.makeDatabase()
        #expect(try await PostgresReplicator(store: store, destination: try destination(url)).push().copiedAll)
        for _ in 0..<300 { try writer.transaction() }

        let proxy = try TCPProxy(targetPort: cluster.port)
        defer { proxy.stop() }
        // 300 transactions are some 110 kB to send (a batch's columns as arrays, decision 114): a
        // cut in the first 40,000 bytes is mid-catch-up.
        let cut = random.int(1...40_000)
        let context = "\(Self.label), cut after \(cut) bytes"
        proxy.cutAfter(bytes: cut)
        let progress = FollowProgress()
        let replicator = PostgresReplicator(store: store, destination: try destination(proxy.proxied(url)))
        let follower = Task {
            do {
                try await replicator.follow(retries: 5) { progress.record($0) }
                progress.finish(nil)
            } catch {
                progress.finish(error)
            }
        }
        defer { follower.cancel() }

        // Caught up with the history despite the cut.
        let backlog = try store.lastHistoryToken()
        guard await progress.wait(within: .seconds(10), until: { $0.last >= backlog || $0.finished }) else {
            Issue.record("""
                \(context): follow did not catch up within 10 s of a dropped connection: it reported \
                \(progress.last) of \(backlog) (\(Self.hangHint))
                """)
            return
        }
        if let error = progress.error {
            Issue.record("\(context): follow failed: \(error)")
            return
        }
        #expect(!proxy.isArmed && proxy.connectionsCut == 1, "\(context): \(proxy.connectionsCut) connections cut")
        #expect(proxy.connectionsAccepted >= 2, "\(context): follow never reconnected")

        // A cut while it waits for commits, then more commits: it stops once it has them all.
        // Tokens run without gaps, one per transaction that changed something, so the last
        // one is known before the writes.
        let accepted = proxy.connectionsAccepted
        proxy.cutAll()
        let target = HistoryToken(backlog.value + 20)
        progress.stop(at: target)
        for _ in 0..<20 { try writer.transaction() }
        #expect(try store.lastHistoryToken() == target, "\(context)")
        guard await progress.wait(within: .seconds(10), until: \.finished) else {
            Issue.record("""
                \(context): follow did not reach \(target) within 10 s of a drop while it waited for commits: it \
                reported \(progress.last) (\(Self.hangHint))
                """)
            return
        }
        if let error = progress.error { Issue.record("\(context): follow failed: \(error)") }
        #expect(proxy.connectionsAccepted > accepted, "\(context): no reconnection after the second cut")
        #expect(try storedToken(in: database) == target, "\(context)")
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model)
            == ReplicatedContent.ofStore(store), "\(context)")
    }

    /// A statement written to a connection that has closed is answered with
    /// ``ReplicationError/connectionFailed(reason:)`` at once, never awaited forever: after the
    /// close, and while it happens (statements queued behind the close fail, those before it
    /// run).
    @Test func statementsWrittenAsTheConnectionClosesAreAnswered() async throws {
        let store = try makeStore()
        defer { try? store.close() }
        let (_, url) = try cluster.makeDatabase()
        let replicator = PostgresReplicator(store: store, destination: try destination(url))

        let closed = try await replicator.connect()
        closed.close()
        let answer = await Self.outcome(within: .seconds(1)) { try await closed.query("SELECT 1") }
        guard case .failure(let error)? = answer else {
            Issue.record("a statement on a closed connection: \(answer.map { "\($0)" } ?? "no answer within 1 s")")
            return
        }
        checkDropError(error, "a statement on a closed connection")

        // Statements on their way while the connection closes: each is answered, by its rows
        // or by the close.
        for round in 0..<10 {
            let connection = try await replicator.connect()
            let answers = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        if index == 20 { connection.close() }
                        let outcome = await Self.outcome(within: .seconds(5)) {
                            try await connection.query("SELECT 1")
                        }
                        return outcome != nil
                    }
                }
                var answered = 0
                for await wasAnswered in group where wasAnswered { answered += 1 }
                return answered
            }
            #expect(answers == 40, "round \(round): \(40 - answers) of 40 statements never answered")
        }
    }

    // MARK: Checks

    /// A dropped connection is a ``ReplicationError/connectionFailed(reason:)`` that says so,
    /// without the password.
    func checkDropError(_ error: any Error, _ context: String) {
        guard let replication = error as? ReplicationError else {
            Issue.record("\(context): expected a ReplicationError, got \(type(of: error)): \(error)")
            return
        }
        guard case .connectionFailed(let reason) = replication else {
            Issue.record("\(context): expected connectionFailed, got \(replication)")
            return
        }
        #expect(!reason.isEmpty, "\(context)")
        for text in ["\(replication)", String(reflecting: replication), replication.localizedDescription] {
            #expect(!text.contains(cluster.password), "\(context): the password is in \(text)")
        }
    }

    /// PostgreSQL ends the session of a reset connection on its own time: until it has, a
    /// transaction it had the whole of may still commit, so the checks wait for it (5 s at most).
    func waitForOtherSessions(on database: String, _ context: String) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let others = try cluster.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND pid <> pg_backend_pid()",
                database: "postgres")
            if others == "0\n" { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("\(context): the cut connection's session was still there after 5 s")
    }

    /// Checks that `database` holds exactly the first N written transactions, N at least
    /// `atLeast`, with N given by the stored token (which must be a transaction's); returns N.
    /// Also that each list's derived counts agree with its rows: a transaction whose items
    /// were applied without their list's settled values would show there.
    func checkWholeTransactions(in database: String, written: WrittenHistory, atLeast: Int,
                                _ context: String) throws -> Int {
        guard let token = try storedToken(in: database) else {
            Issue.record("\(context): no token stored")
            return 0
        }
        guard let applied = written.count(through: token), applied >= atLeast else {
            Issue.record("\(context): token \(token) is no transaction's, or before the copy's (\(atLeast))")
            return 0
        }
        let expected = written.content(after: applied)
        let lists = try rows("SELECT pk, name FROM \"TodoList\" ORDER BY pk", database)
        let items = try rows("SELECT pk, title, list FROM \"Item\" ORDER BY pk", database)
        #expect(lists == expected.listLines, "\(context): lists after \(applied) transactions")
        if items != expected.itemLines {
            let missing = Set(expected.itemLines).subtracting(items).sorted().prefix(5)
            let extra = Set(items).subtracting(expected.itemLines).sorted().prefix(5)
            Issue.record("""
                \(context): items after \(applied) transactions (token \(token)): missing \(Array(missing)), \
                extra \(Array(extra))
                """)
        }
        let disagreeing = try cluster.psql("""
            SELECT count(*) FROM "TodoList" l
            WHERE l."itemCount" IS DISTINCT FROM (SELECT count(*) FROM "Item" i WHERE i.list = l.pk)
               OR l."tagCount" IS DISTINCT FROM (SELECT count(*) FROM "Tag_lists" j WHERE j.target = l.pk)
            """, database: database)
        #expect(disagreeing == "0\n", "\(context): lists whose counts disagree with their rows")
        return applied
    }

    func storedToken(in database: String) throws -> HistoryToken? {
        let text = try cluster.psql("SELECT token FROM strata_replication WHERE name = 'default'", database: database)
        return UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)).map(HistoryToken.init)
    }

    func rows(_ query: String, _ database: String) throws -> [String] {
        try cluster.psql(query, database: database).split(separator: "\n").map(String.init)
    }

    /// What `body` returned or threw, or `nil` when it had not ended after `limit`: it is then
    /// cancelled and left behind, so that a push that never returns fails the test instead of
    /// hanging the test process.
    static func outcome<T: Sendable>(within limit: Duration, _ body: @escaping @Sendable () async throws -> T) async
        -> Result<T, any Error>? {
        let box = Mutex<Result<T, any Error>?>(nil)
        let task = Task {
            do {
                let value = try await body()
                box.withLock { $0 = .success(value) }
            } catch {
                box.withLock { $0 = .failure(error) }
            }
        }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let outcome = box.withLock({ $0 }) { return outcome }
            try? await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        return nil
    }
}

// MARK: - The written history

/// What the tests' transactions did to lists and items, per transaction, with each one's
/// history token: the content PostgreSQL should hold after any number of them, computed
/// without the store (which only shows its newest state).
struct WrittenHistory {
    enum Step {
        case addList(pk: UInt64, name: String)
        case dropList(pk: UInt64)   // its items go with it (cascade)
        case addItem(pk: UInt64, title: String, list: UInt64)
        case retitle(pk: UInt64, title: String)
        case move(pk: UInt64, list: UInt64)
        case dropItem(pk: UInt64)
    }

    struct Content: Equatable {
        var lists: [UInt64: String] = [:]
        var items: [UInt64: Item] = [:]

        struct Item: Equatable {
            var title: String
            var list: UInt64
        }

        /// As `psql -At` prints `SELECT pk, name FROM "TodoList" ORDER BY pk`.
        var listLines: [String] { lists.sorted { $0.key < $1.key }.map { "\($0.key)|\($0.value)" } }
        /// As `psql -At` prints `SELECT pk, title, list FROM "Item" ORDER BY pk`.
        var itemLines: [String] { items.sorted { $0.key < $1.key }.map { "\($0.key)|\($0.value.title)|\($0.value.list)" } }
    }

    private(set) var tokens: [HistoryToken] = []
    private(set) var transactions: [[Step]] = []

    var count: Int { transactions.count }

    mutating func append(_ steps: [Step], token: HistoryToken) {
        transactions.append(steps)
        tokens.append(token)
    }

    /// How many transactions `token` says were applied: `nil` when it is no transaction's.
    func count(through token: HistoryToken) -> Int? {
        tokens.firstIndex(of: token).map { $0 + 1 }
    }

    /// The lists and items after the first `count` transactions.
    func content(after count: Int) -> Content {
        var content = Content()
        for steps in transactions.prefix(count) { content.apply(steps) }
        return content
    }
}

extension WrittenHistory.Content {
    /// Does what one transaction did.
    mutating func apply(_ steps: [WrittenHistory.Step]) {
        for step in steps {
            switch step {
            case .addList(let pk, let name): lists[pk] = name
            case .dropList(let pk):
                lists[pk] = nil
                items = items.filter { $0.value.list != pk }
            case .addItem(let pk, let title, let list): items[pk] = .init(title: title, list: list)
            case .retitle(let pk, let title): items[pk]?.title = title
            case .move(let pk, let list): items[pk]?.list = list
            case .dropItem(let pk): items[pk] = nil
            }
        }
    }
}

/// Writes seeded transactions to a TodoList store and records them in a ``WrittenHistory``:
/// each inserts a few items (titles naming the transaction), and may retitle, move or delete
/// one, link or unlink a tag; every 40th adds a list and deletes one with its items.
struct HistoryWriter {
    let store: RecordStore
    private(set) var written = WrittenHistory()
    private var random: SplitMix64
    private var content = WrittenHistory.Content()
    private var tags: [ObjectID] = []
    private var links = Set<[UInt64]>()   // [tag, list]

    /// Starts with two transactions: three tags, then four lists.
    init(store: RecordStore, seed: UInt64) throws {
        self.store = store
        random = SplitMix64(seed: seed)
        tags = try store.write { tx in try (0..<3).map { try tx.insert("Tag", ["label": "tag \($0)"]) } }
        written.append([], token: try store.lastHistoryToken())
        try write { tx, steps in
            for index in 0..<4 { steps.append(.addList(pk: try tx.insert("TodoList", ["name": "list \(index)"]).primaryKey,
                                                       name: "list \(index)")) }
        }
    }

    mutating func transaction() throws {
        let number = written.count
        let lists = content.lists.keys.sorted()
        let items = content.items.keys.sorted()
        // The plan first (the generator is not used inside the write's closure); inserts get
        // their keys in the write.
        var plan: [WrittenHistory.Step] = []
        for index in 0..<random.int(2...5) {
            plan.append(.addItem(pk: 0, title: "t\(number) item \(index)", list: lists[random.below(lists.count)]))
        }
        var touched = Set<UInt64>()
        if !items.isEmpty, random.chance(0.5) {
            let pk = items[random.below(items.count)]
            touched.insert(pk)
            plan.append(.retitle(pk: pk, title: "t\(number) renamed \(pk)"))
        }
        if !items.isEmpty, random.chance(0.3) {
            let pk = items[random.below(items.count)]
            touched.insert(pk)
            plan.append(.move(pk: pk, list: lists[random.below(lists.count)]))
        }
        if !items.isEmpty, random.chance(0.35) {
            let pk = items[random.below(items.count)]
            if !touched.contains(pk) { plan.append(.dropItem(pk: pk)) }
        }
        var dropped: UInt64?
        if number % 40 == 0 {
            dropped = lists[random.below(lists.count)]
            plan.append(.addList(pk: 0, name: "list of t\(number)"))
            plan.append(.dropList(pk: dropped!))
        }
        // A tag linked to a list, or unlinked when it was: before the steps, so a list the
        // transaction deletes is still there.
        var link: (pair: [UInt64], add: Bool)?
        if random.chance(0.15) {
            let pair = [tags[random.below(tags.count)].primaryKey, lists[random.below(lists.count)]]
            link = (pair, !links.contains(pair))
        }
        try write { tx, steps in
            if let link {
                let tag = ObjectID(entity: "Tag", primaryKey: link.pair[0])
                let list = ObjectID(entity: "TodoList", primaryKey: link.pair[1])
                if link.add { try tx.add(list, to: "lists", of: tag) } else { try tx.remove(list, from: "lists", of: tag) }
            }
            for step in plan {
                switch step {
                case .addItem(_, let title, let list):
                    let id = try tx.insert("Item", ["title": title, "amount": Decimal(title.count) / 4,
                                                    "list": ObjectID(entity: "TodoList", primaryKey: list)])
                    steps.append(.addItem(pk: id.primaryKey, title: title, list: list))
                case .retitle(let pk, let title):
                    try tx.update(ObjectID(entity: "Item", primaryKey: pk), ["title": title, "quantity": Int32(pk % 5 + 1)])
                    steps.append(step)
                case .move(let pk, let list):
                    try tx.set("list", of: ObjectID(entity: "Item", primaryKey: pk),
                               to: ObjectID(entity: "TodoList", primaryKey: list))
                    steps.append(step)
                case .dropItem(let pk):
                    try tx.delete(ObjectID(entity: "Item", primaryKey: pk))
                    steps.append(step)
                case .addList(_, let name):
                    steps.append(.addList(pk: try tx.insert("TodoList", ["name": name]).primaryKey, name: name))
                case .dropList:
                    try tx.delete(ObjectID(entity: "TodoList", primaryKey: dropped!))
                    steps.append(step)
                }
            }
        }
        if let link {
            if link.add { links.insert(link.pair) } else { links.remove(link.pair) }
        }
        if let dropped { links = links.filter { $0[1] != dropped } }
    }

    /// One write transaction, its steps recorded with its token.
    private mutating func write(_ body: (RecordTransaction, inout [WrittenHistory.Step]) throws -> Void) throws {
        var steps: [WrittenHistory.Step] = []
        try store.write { tx in try body(tx, &steps) }
        written.append(steps, token: try store.lastHistoryToken())
        content.apply(steps)
    }

    /// The store's lists and items, as ``WrittenHistory/Content``.
    static func content(of store: RecordStore) throws -> WrittenHistory.Content {
        try store.read { reader in
            var content = WrittenHistory.Content()
            for id in try reader.objects("TodoList") {
                if case .string(let name)? = try reader.values(of: id)?["name"] { content.lists[id.primaryKey] = name }
            }
            for id in try reader.objects("Item") {
                guard case .string(let title)? = try reader.values(of: id)?["title"],
                      let list = try reader.target(of: "list", of: id) else { continue }
                content.items[id.primaryKey] = .init(title: title, list: list.primaryKey)
            }
            return content
        }
    }
}

/// What `follow` reported and how it ended, shared between the test and the follower's task
/// (its `stop` closure runs there).
final class FollowProgress: Sendable {
    struct State {
        /// The token of the last report.
        var last = HistoryToken.start
        /// Where `stop` says to stop.
        var stopAt: HistoryToken?
        var finished = false
        /// Why `follow` threw, when it did.
        var error: String?
    }

    private let state = Mutex(State())

    /// Records a report; true (stop following) once it reaches the token given to ``stop(at:)``.
    func record(_ report: PushReport) -> Bool {
        state.withLock { state in
            state.last = report.token
            return state.stopAt.map { report.token >= $0 } ?? false
        }
    }

    func stop(at token: HistoryToken) { state.withLock { $0.stopAt = token } }

    func finish(_ error: (any Error)?) {
        state.withLock { state in
            state.finished = true
            state.error = error.map { "\($0)" }
        }
    }

    var error: String? { state.withLock { $0.error } }
    var last: HistoryToken { state.withLock { $0.last } }

    /// Waits until `done` holds; false when it still does not after `limit`.
    func wait(within limit: Duration, until done: (State) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if state.withLock({ done($0) }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
