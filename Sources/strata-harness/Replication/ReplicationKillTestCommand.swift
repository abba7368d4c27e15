import ArgumentParser
import Foundation
import StrataRecords
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata-harness replicate-kill`: `strata replicate --follow` killed with SIGKILL at random
/// moments while this process commits record transactions to a store shared between
/// processes; each kill is followed by a fresh `strata replicate --follow`. At the end a last
/// one-shot `strata replicate` runs and PostgreSQL must hold exactly what the store holds
/// (every row, derived value, to-one and link): nothing lost, nothing applied twice. Starts a
/// throwaway PostgreSQL cluster (`PostgresCluster`, Debian's `postgresql`).
struct ReplicationKillTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate-kill",
        abstract: "Kill `strata replicate --follow` while a store commits; verify PostgreSQL equals the store.")

    @Option(help: "Kills to perform.")
    var kills = 100
    @Option(help: "Record transactions to commit meanwhile (at least).")
    var transactions = 10_000
    @Option(help: "Seed of the workload and the kill schedule.")
    var seed: UInt64 = 1
    @Flag(help: "Replicate both ways (--pull): a server application inserts and updates rows in PostgreSQL meanwhile, and each of its inserts must reach the store exactly once.")
    var pull = false

    func validate() throws {
        if kills < 0 { throw ValidationError("--kills must be 0 or more") }
        if transactions < 1 { throw ValidationError("--transactions must be at least 1") }
    }

    func run() throws {
        let cluster = try PostgresCluster.shared
        let (database, url) = try cluster.makeDatabase()
        let dir = try makeTemporaryDirectory("strata-replicate-kill")
        let path = dir + "/store.strata"
        let tool = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("strata").path
        guard access(tool, X_OK) == 0 else { throw ToolError("no strata tool beside the harness: \(tool)") }
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        options.checkpointLogBytes = 1 << 20
        let store = try RecordStore(path: path, model: try todoModel(), options: options, history: .on)
        let lists = try store.write { tx in try (0..<8).map { try tx.insert("TodoList", ["name": "List \($0)"]) } }
        let tags = try store.write { tx in try (0..<4).map { try tx.insert("Tag", ["label": "tag \($0)"]) } }

        // The writer: a thread committing until both the kills and the transactions are done.
        let stop = Atomic<Bool>(false)
        let committed = Atomic<Int>(0)
        let writerFailure = Mutex<String?>(nil)
        let writerSeed = seed
        let writer = Thread {
            var rng = SplitMix64(seed: writerSeed)
            var items: [ObjectID] = []
            while !stop.load(ordering: .relaxed) {
                do {
                    try store.write { tx in
                        // Inserts until there are items to move, change and delete.
                        switch items.count < 20 ? 0 : rng.below(10) {
                        case 0..<5:
                            for _ in 0..<(1 + rng.below(4)) {
                                let item = try tx.insert("Item", ["title": "Item \(items.count)",
                                                                  "amount": Decimal(rng.below(1000)) / 8,
                                                                  "quantity": Int32(1 + rng.below(5))])
                                try tx.set("list", of: item, to: lists[rng.below(lists.count)])
                                items.append(item)
                            }
                        case 5..<7:
                            try tx.set("list", of: items[rng.below(items.count)], to: lists[rng.below(lists.count)])
                        case 7:
                            try tx.update(items[rng.below(items.count)], ["amount": Decimal(rng.below(500))])
                        case 8:
                            let tag = tags[rng.below(tags.count)]
                            let list = lists[rng.below(lists.count)]
                            if try tx.members(of: "lists", of: tag).contains(list) {
                                try tx.remove(list, from: "lists", of: tag)
                            } else {
                                try tx.add(list, to: "lists", of: tag)
                            }
                        default:
                            let index = rng.below(items.count)
                            try tx.delete(items.remove(at: index))
                        }
                    }
                    committed.add(1, ordering: .relaxed)
                } catch {
                    writerFailure.withLock { $0 = "\(error)" }
                    return
                }
            }
        }
        do {
            // The first push copies the store, before any kill: a copy killed every time would
            // leave the followers nothing but copies to die in. Then they apply transaction
            // after transaction (with no kills, the last push applies everything). Pulling, the
            // server application needs the tables from the start too.
            let first = try ChildProcess(program: tool, arguments: ["replicate", path, "--to", url] + (pull ? ["--pull"] : []),
                                         environment: ["PGPASSWORD": cluster.password])
            while first.readLine(timeoutMilliseconds: 60_000) != nil {}
            _ = first.wait()
        }
        writer.start()

        // The server application: inserts titled "server N" and budget updates, through psql,
        // once the first replicator made the tables.
        let serverInserts = Atomic<Int>(0)
        let serverUpdates = Atomic<Int>(0)
        let serverFailure = Mutex<String?>(nil)
        let listKeys = lists.map(\.primaryKey)
        let server = Thread {
            var next = 0
            while !stop.load(ordering: .relaxed) {
                let list = listKeys[next % listKeys.count]
                let statement = next % 3 == 2
                    ? "UPDATE \"TodoList\" SET budget = \(next) WHERE pk = \(list)"
                    : "INSERT INTO \"Item\" (title, amount, quantity, list) VALUES ('server \(serverInserts.load(ordering: .relaxed))', 1, 1, \(list))"
                do {
                    _ = try cluster.psql(statement, database: database)
                    if next % 3 == 2 { serverUpdates.add(1, ordering: .relaxed) } else { serverInserts.add(1, ordering: .relaxed) }
                    next += 1
                } catch {
                    serverFailure.withLock { $0 = "\(error)" }
                    usleep(50_000)
                }
                usleep(5_000)
            }
        }
        if pull { server.start() }

        var rng = SplitMix64(seed: seed ^ 0x5245_504C)
        let environment = ["PGPASSWORD": cluster.password]
        let pullArguments = pull ? ["--pull"] : []
        var killed = 0
        var endedEarly: [String] = []
        let started = monotonicSeconds()
        // With no kills, the writer commits alone and the last push applies all of it: what
        // that push prints is the replicator's throughput on this workload.
        while killed < kills || committed.load(ordering: .relaxed) < transactions {
            if kills == 0 {
                usleep(10_000)
                continue
            }
            let child = try ChildProcess(program: tool, arguments: ["replicate", path, "--to", url, "--follow"] + pullArguments,
                                         environment: environment)
            // Long enough to start (open the store, log in, check the tables) and apply a
            // batch or a few, short enough that most kills land in one. Pulling, a round also
            // pulls.
            usleep(UInt32(pull ? 100_000 + rng.below(1_400_000) : 50_000 + rng.below(550_000)))
            child.kill()
            let status = child.wait()
            if status.signal != SIGKILL { endedEarly.append("replicate ended by itself: \(status)") }
            killed += 1
            if endedEarly.count > 3 { break }
        }
        stop.store(true, ordering: .relaxed)
        while !writer.isFinished || (pull && !server.isFinished) { usleep(1000) }
        if let failure = writerFailure.withLock({ $0 }) { throw ToolError("the writer failed: \(failure)") }
        let final = try ChildProcess(program: tool, arguments: ["replicate", path, "--to", url] + pullArguments,
                                     environment: environment)
        var lastLine = ""
        while let line = final.readLine(timeoutMilliseconds: 600_000) { lastLine = line }
        let finalStatus = final.wait()
        let equal = try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model)
            == ReplicatedContent.ofStore(store)
        let token = try cluster.psql("SELECT token FROM strata_replication", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let lastToken = try store.lastHistoryToken()
        // Each insert of the server application in the store exactly once.
        var serverProblems: [String] = []
        if pull {
            var seen: [String: Int] = [:]
            try store.read { reader in
                for id in try reader.objects("Item") {
                    if case .string(let title)? = try reader.values(of: id)?["title"], title.hasPrefix("server ") {
                        seen[title, default: 0] += 1
                    }
                }
            }
            let inserted = serverInserts.load(ordering: .relaxed)
            let lost = (0..<inserted).filter { seen["server \($0)"] == nil }.count
            let duplicated = seen.values.filter { $0 > 1 }.count
            print("replicate-kill: the server application made \(inserted) inserts and \(serverUpdates.load(ordering: .relaxed)) "
                  + "updates; in the store: \(lost) lost, \(duplicated) duplicated")
            if let failure = serverFailure.withLock({ $0 }) { print("replicate-kill: a server statement failed: \(failure)") }
            if lost > 0 || duplicated > 0 { serverProblems.append("\(lost) server inserts lost, \(duplicated) duplicated") }
        }
        try store.close()
        let seconds = monotonicSeconds() - started
        let total = committed.load(ordering: .relaxed) + 2
        print("replicate-kill: \(killed) kills, \(total) transactions in \(String(format: "%.1f", seconds)) s; "
              + "PostgreSQL \(equal ? "equals" : "DIFFERS FROM") the store, token \(token) of \(lastToken)")
        print("replicate-kill: the last push: \(lastLine)")
        for line in endedEarly.prefix(5) { printError("replicate-kill: \(line)") }
        for problem in serverProblems { printError("replicate-kill: \(problem)") }
        if !equal || token != String(lastToken.value) || finalStatus.exitCode != 0 || !endedEarly.isEmpty
            || !serverProblems.isEmpty {
            printError("replicate-kill: last run: \(lastLine) (\(finalStatus)); the store is kept in \(dir)")
            throw ExitCode(1)
        }
        removeDirectory(dir)
    }
}

import Synchronization
