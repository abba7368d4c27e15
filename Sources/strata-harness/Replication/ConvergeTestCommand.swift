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

/// `strata-harness converge`: several stores, each written by a process of its own
/// (`converge-writer`) and replicated by `strata replicate --pull --follow` into one dataset,
/// the replicators killed with SIGKILL at random moments and restarted, while a server
/// application writes to PostgreSQL too (items, budgets, tags under labels the stores use, and
/// items without their required title). At quiescence (writers stopped, each store exchanged
/// until nothing moves) every store must equal PostgreSQL and every other store, pass the
/// record check (derived values right), hold each item its writer left exactly once and each
/// valid server item exactly once, no label twice, and each refusal decided as documented
/// (decision 111: the smaller key keeps a unique value; a server's invalid row is gone).
/// With `--cuts` the replicators reach PostgreSQL through a proxy that now and then resets
/// every connection at once (mid-batch, mid-pull), and with `--restarts` the server itself is
/// stopped as a crash would stop it and started again, among the kills.
struct ConvergeTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "converge",
        abstract: "Several stores and a server writing one dataset through PostgreSQL, replicators killed; verify they converge.")

    @Option(help: "Stores (each with a writing process and a replicator).")
    var stores = 3
    @Option(help: "Replicator kills to perform.")
    var kills = 100
    @Option(help: "Seed of the writers, the server and the kill schedule.")
    var seed: UInt64 = 1
    @Option(help: "Pause between a writer's commits, in milliseconds.")
    var pause = 5
    @Option(help: "Network cuts: every replicator connection reset at once, among the kills.")
    var cuts = 0
    @Option(help: "PostgreSQL restarts (stopped as by a crash, then started), among the kills.")
    var restarts = 0

    func validate() throws {
        if stores < 2 { throw ValidationError("--stores must be at least 2") }
        if kills < 0 || cuts < 0 || restarts < 0 { throw ValidationError("--kills, --cuts and --restarts must be 0 or more") }
    }

    func run() throws {
        let cluster = try PostgresCluster.shared
        let (database, url) = try cluster.makeDatabase()
        let dir = try makeTemporaryDirectory("strata-converge")
        let tool = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("strata").path
        guard access(tool, X_OK) == 0 else { throw ToolError("no strata tool beside the harness: \(tool)") }
        let environment = ["PGPASSWORD": cluster.password]
        let paths = (0..<stores).map { dir + "/s\($0).strata" }
        let stopFile = dir + "/stop"
        let started = monotonicSeconds()

        // The first store makes the dataset: a few lists and tags, pushed with recording set up.
        do {
            var options = StoreOptions(durability: .normal)
            options.sharing = .shared
            let first = try RecordStore(path: paths[0], model: try todoModel(), options: options, history: .on)
            try first.write { tx in
                for n in 0..<6 { _ = try tx.insert("TodoList", ["name": "list \(n)"]) }
                for n in 0..<3 { _ = try tx.insert("Tag", ["label": "label \(n)"]) }
            }
            try first.close()
        }
        try runToEnd(tool, ["replicate", paths[0], "--to", url, "--name", "s0", "--pull"], environment)
        // The others join, each made from the dataset alone.
        for k in 1..<stores {
            try runToEnd(tool, ["replicate", paths[k], "--from", url, "--name", "s\(k)", "--pull"], environment)
        }

        // The writers, one process per store.
        var writers: [ChildProcess] = []
        for k in 0..<stores {
            writers.append(try ChildProcess(arguments: ["converge-writer", "--path", paths[k], "--store", String(k),
                                                        "--seed", String(seed &+ UInt64(k) &* 0x9E37_79B9),
                                                        "--stop", stopFile, "--pause", String(pause)]))
        }

        // The server application: items, budgets, tags under the stores' labels, and now and then
        // an item without its title (which every store refuses).
        let stop = Atomic<Bool>(false)
        let serverItems = Mutex<[String]>([])
        let serverCounts = Mutex<[String: Int]>([:])
        let serverFailure = Mutex<String?>(nil)
        let serverSeed = seed ^ 0x5345_5256
        let server = Thread {
            var rng = SplitMix64(seed: serverSeed)
            var next = 0
            while !stop.load(ordering: .relaxed) {
                let roll = rng.below(100)
                let list = "(SELECT pk FROM \"TodoList\" ORDER BY random() LIMIT 1)"
                let kind: String, statement: String
                switch roll {
                case 0..<50:
                    kind = "item"
                    statement = "INSERT INTO \"Item\" (title, amount, quantity, list) VALUES ('server \(next)', \(rng.below(100)), 2, \(list))"
                case 50..<70:
                    kind = "budget"
                    statement = "UPDATE \"TodoList\" SET budget = \(rng.below(10_000)) WHERE pk = \(list)"
                case 70..<85:
                    kind = "tag"
                    statement = "INSERT INTO \"Tag\" (label, score) VALUES ('label \(rng.below(ConvergeWriterCommand.labels))', 100)"
                case 85..<95:
                    kind = "amount"
                    statement = "UPDATE \"Item\" SET amount = \(rng.below(50)) WHERE pk = (SELECT pk FROM \"Item\" ORDER BY random() LIMIT 1)"
                default:
                    kind = "invalid"
                    statement = "INSERT INTO \"Item\" (amount, list) VALUES (7, \(list))"
                }
                do {
                    _ = try cluster.psql(statement, database: database)
                    if kind == "item" { serverItems.withLock { $0.append("server \(next)") } }
                    serverCounts.withLock { $0[kind, default: 0] += 1 }
                } catch {
                    // PostgreSQL restarting, say. A statement whose commit the server made but
                    // never acknowledged is not counted; its title is not used again.
                    serverFailure.withLock { $0 = "\(error)" }
                }
                next += 1
                usleep(20_000)
            }
        }
        server.start()

        // The replicators, killed one at a time at random and started again; among the kills,
        // the network cut and PostgreSQL restarted (the followers reconnect by themselves).
        let proxy = try TCPProxy(targetPort: cluster.port)
        defer { proxy.stop() }
        let followURL = cuts > 0 ? proxy.proxied(url) : url
        func follower(_ k: Int) throws -> ChildProcess {
            try ChildProcess(program: tool, arguments: ["replicate", paths[k], "--to", followURL, "--name", "s\(k)", "--pull",
                                                        "--follow"],
                             environment: environment)
        }
        var followers = try (0..<stores).map { try follower($0) }
        var rng = SplitMix64(seed: seed ^ 0x4B49_4C4C)
        var killed = 0, cut = 0, restarted = 0
        var endedEarly: [String] = []
        while killed + cut + restarted < kills + cuts + restarts {
            usleep(UInt32(100_000 + rng.below(900_000)))
            let event = rng.below(kills + cuts + restarts - killed - cut - restarted)
            if event < cuts - cut {
                proxy.cutAll()
                cut += 1
                continue
            }
            if event < cuts - cut + restarts - restarted {
                try cluster.restart()
                restarted += 1
                continue
            }
            let k = rng.below(stores)
            followers[k].kill()
            let status = followers[k].wait()
            if status.signal != SIGKILL {
                endedEarly.append("s\(k)'s replicator ended by itself: \(status); " + followers[k].bufferedLines().suffix(3).joined(separator: " / "))
            }
            killed += 1
            if endedEarly.count > 3 { break }
            followers[k] = try follower(k)
        }
        let writingSeconds = monotonicSeconds() - started

        // Quiescence: the writers stop, the server stops, the followers go (killed once more).
        _ = FileManager.default.createFile(atPath: stopFile, contents: Data())
        var ledger = Set<String>()
        var commits = 0
        for (k, writer) in writers.enumerated() {
            while let line = writer.readLine(timeoutMilliseconds: 120_000) {
                if line.hasPrefix("+") { ledger.insert(String(line.dropFirst())) }
                if line.hasPrefix("-") { ledger.remove(String(line.dropFirst())) }
                if line.hasPrefix("done ") { commits += Int(line.dropFirst(5)) ?? 0 }
            }
            let status = writer.wait()
            if status.exitCode != 0 { endedEarly.append("s\(k)'s writer: \(status)") }
        }
        stop.store(true, ordering: .relaxed)
        while !server.isFinished { usleep(1000) }
        for f in followers {
            f.kill()
            _ = f.wait()
        }
        // Each store exchanges in turn until a whole round moves nothing and the queues are empty.
        var rounds = 0
        var lastLines: [String] = []
        while rounds < 10 {
            rounds += 1
            var moved = false
            lastLines = []
            for k in 0..<stores {
                let lines = try runToEnd(tool, ["replicate", paths[k], "--to", url, "--name", "s\(k)", "--pull", "--json"],
                                         environment)
                lastLines += lines
                for line in lines where line.contains("\"kind\":\"pull\"") && !line.contains("\"changes\":0,")
                    || line.contains("\"kind\":\"push\"") && !line.contains("\"transactions\":0,") {
                    moved = true
                }
            }
            let queued = try cluster.psql("SELECT count(*) FROM strata_changes", database: database)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if !moved && queued == "0" { break }
        }

        // The checks.
        var problems: [String] = []
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        let inPostgres = try ReplicatedContent.ofDatabase(database, in: cluster, model: try todoModel())
        let items = serverItems.withLock { $0 }
        var rowCounts: [String] = []
        for k in 0..<stores {
            let store = try RecordStore(path: paths[k], model: try todoModel(), options: options, history: .on)
            defer { try? store.close() }
            let content = try ReplicatedContent.ofStore(store)
            if content != inPostgres {
                let difference = ReplicatedContent.difference(content, inPostgres)
                let lines = difference.split(separator: "\n")
                problems.append("s\(k) differs from PostgreSQL (\(lines.count) lines): "
                    + lines.filter { !$0.hasPrefix("Item") }.prefix(8).joined(separator: "\n")
                    + "\n" + lines.filter { $0.hasPrefix("Item") }.prefix(6).joined(separator: "\n"))
                problems += try traces(of: difference, in: paths, database: database, cluster: cluster)
            }
            let issues = try store.read { try $0.checkRecords() }
            if !issues.isEmpty { problems.append("s\(k)'s record check: \(issues.prefix(3))") }
            var titles: [String: Int] = [:]
            var labels: [String: Int] = [:]
            try store.read { reader in
                for id in try reader.objects("Item") {
                    if case .string(let title)? = try reader.values(of: id)?["title"] { titles[title, default: 0] += 1 }
                }
                for id in try reader.objects("Tag") {
                    if case .string(let label)? = try reader.values(of: id)?["label"] { labels[label, default: 0] += 1 }
                }
                rowCounts.append("s\(k): \(try reader.count("TodoList")) lists, \(try reader.count("Item")) items, "
                    + "\(try reader.count("Tag")) tags")
            }
            let missing = ledger.filter { titles[$0] != 1 }.sorted()
            let extra = titles.keys.filter { $0.first == "s" && $0.dropFirst().first?.isNumber == true && !ledger.contains($0) }
                .sorted()
            let serverMissing = items.filter { titles[$0] != 1 }.sorted()
            if !missing.isEmpty { problems.append("s\(k): \(missing.count) writers' items not there exactly once, e.g. \(missing.prefix(3))") }
            if !extra.isEmpty { problems.append("s\(k): \(extra.count) items no writer left, e.g. \(extra.prefix(3))") }
            if !serverMissing.isEmpty {
                problems.append("s\(k): \(serverMissing.count) server items not there exactly once, e.g. \(serverMissing.prefix(3))")
            }
            if titles.values.contains(where: { $0 > 1 }) { problems.append("s\(k): a title twice") }
            if labels.values.contains(where: { $0 > 1 }) { problems.append("s\(k): a label twice") }
        }
        // Every refusal as documented: a duplicate kept by a smaller key and gone; an invalid
        // server insert gone.
        let rejects = try cluster.psql("SELECT kind, tbl, pk, coalesce(kept_by, -1), outcome FROM strata_rejects ORDER BY id",
                                       database: database)
            .split(separator: "\n").map { $0.split(separator: "|").map(String.init) }
        var refusedByKind: [String: Int] = [:]
        var staleDecisions = 0
        for reject in rejects where reject.count == 5 {
            refusedByKind[reject[0], default: 0] += 1
            let pk = Int64(reject[2]) ?? 0, keptBy = Int64(reject[3]) ?? 0
            if reject[0] == "duplicate" && !(keptBy < pk) { problems.append("duplicate \(reject[1]) \(pk) kept by a larger key \(keptBy)") }
            let left = try cluster.psql("SELECT count(*) FROM \"\(reject[1])\" WHERE pk = \(pk)", database: database)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard reject[4] == "deleted" && left != "0" else { continue }
            // A store that decided and was killed before its commit finds, when it applies the
            // claim again, that the row that kept the value was deleted meanwhile: then no
            // duplicate is left, and the row it would have deleted stays (decision 111).
            let winner = try cluster.psql("SELECT count(*) FROM \"\(reject[1])\" WHERE pk = \(keptBy)", database: database)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if reject[0] != "duplicate" || winner != "0" {
                problems.append("refused \(reject[1]) \(pk) still in PostgreSQL (kept by \(keptBy): \(winner) rows)")
            } else {
                staleDecisions += 1
            }
        }
        let nullTitles = try cluster.psql("SELECT count(*) FROM \"Item\" WHERE title IS NULL", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        if nullTitles != "0" { problems.append("\(nullTitles) items without a title in PostgreSQL") }
        let counts = serverCounts.withLock { $0 }
        if (counts["invalid"] ?? 0) > 0 && (refusedByKind["invalid"] ?? 0) == 0 { problems.append("no invalid server row was refused") }
        problems += endedEarly

        let seconds = monotonicSeconds() - started
        print("converge: \(stores) stores, \(killed) replicator kills, \(cut) network cuts, \(restarted) PostgreSQL restarts, "
              + "\(commits) store commits and server writes "
              + "\(counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")) "
              + "in \(String(format: "%.1f", writingSeconds)) s; quiet after \(rounds) exchange round\(rounds == 1 ? "" : "s"), "
              + "\(String(format: "%.1f", seconds)) s in all")
        print("converge: \(rowCounts.joined(separator: "; ")); \(ledger.count) writers' items and \(items.count) server items "
              + "each there once; refusals: \(refusedByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
              + (staleDecisions > 0 ? " (\(staleDecisions) not carried out: the row that kept the value was deleted first)" : ""))
        if let failure = serverFailure.withLock({ $0 }) { print("converge: a server statement failed (retried): \(failure)") }
        if problems.isEmpty {
            print("converge: every store equals PostgreSQL and the others")
            removeDirectory(dir)
        } else {
            for problem in problems { printError("converge: \(problem)") }
            printError("converge: the last round: \(lastLines.suffix(6).joined(separator: " / ")); the stores are kept in \(dir)")
            throw ExitCode(1)
        }
    }

    /// What each store's history and PostgreSQL's decisions say of the rows a difference names
    /// (its lines' first field), to tell how they came apart.
    func traces(of difference: String, in paths: [String], database: String, cluster: PostgresCluster) throws -> [String] {
        var rows = Set<ObjectID>()
        for line in difference.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, !fields[0].contains("_"),
                  let key = UInt64(fields[2].split(separator: "|").first ?? "") else { continue }
            rows.insert(ObjectID(entity: String(fields[0]), primaryKey: key))
        }
        var out: [String] = []
        for row in rows.sorted(by: { ($0.entity != "Item" ? 0 : 1, $0.primaryKey) < ($1.entity != "Item" ? 0 : 1, $1.primaryKey) }).prefix(3) {
            let key = row.primaryKey
            out.append("rejects of \(row): " + (try cluster.psql(
                "SELECT kind || ' ' || outcome || ' by ' || decided_by || ' kept by ' || coalesce(kept_by::text, '-') || ' at ' || at "
                    + "FROM strata_rejects WHERE tbl = '\(row.entity)' AND pk = \(key) ORDER BY id", database: database))
                .replacingOccurrences(of: "\n", with: "; "))
            for (k, path) in paths.enumerated() {
                var options = StoreOptions(durability: .normal)
                options.sharing = .shared
                options.readOnly = true
                let store = try RecordStore(path: path, model: try todoModel(), options: options)
                defer { try? store.close() }
                var steps: [String] = []
                for transaction in try store.history() {
                    for change in transaction.changes where change.id == row || change.other == row {
                        steps.append("\(transaction.token.value) \(transaction.author ?? "-") \(change.kind) \(change.id)"
                            + (change.other.map { " \($0)" } ?? ""))
                    }
                }
                out.append("s\(k)'s history of \(row): \(steps.suffix(12).joined(separator: "; "))")
            }
        }
        return out
    }

    /// Runs the tool to its end and returns what it printed; a failure throws with its output.
    @discardableResult
    func runToEnd(_ tool: String, _ arguments: [String], _ environment: [String: String]) throws -> [String] {
        let child = try ChildProcess(program: tool, arguments: arguments, environment: environment)
        var lines: [String] = []
        while let line = child.readLine(timeoutMilliseconds: 300_000) { lines.append(line) }
        let status = child.wait()
        guard status.exitCode == 0 else {
            throw ToolError("strata \(arguments.prefix(2).joined(separator: " ")) failed (\(status)): \(lines.suffix(3))")
        }
        return lines
    }
}

import Synchronization
