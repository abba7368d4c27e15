import Foundation
#if canImport(Glibc)
import Glibc
#endif
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// `strata replicate` as an operator runs it, against a throwaway PostgreSQL cluster: a copy and
/// then nothing twice, and bad input that fails clearly without ever printing the password.
@Suite(.serialized) struct ReplicateToolTests {
    @Test func replicateCopiesThenAppliesEachTransactionOnce() throws {
        let cluster = try PostgresCluster.shared
        let (database, url) = try cluster.makeDatabase()
        let (directory, path) = try HistoryToolTests.makeFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["PGPASSWORD": cluster.password]
        let first = try Tool.run("strata", ["replicate", path, "--to", url], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("copied the store, then replicated 0 transactions"), "\(first.stdout)")
        #expect(first.stdout.contains("token 3"), "\(first.stdout)")
        let store = try RecordStore(path: path, model: try todoModel())
        let list = try store.read { try $0.objects("TodoList")[0] }
        try store.write { tx in try tx.update(list, ["name": "Renamed"]) }
        try store.close()
        let second = try Tool.run("strata", ["replicate", path, "--to", url], environment: environment)
        // The list, and its item whose derived copy of the list's name moved with it.
        #expect(second.stdout.hasPrefix("replicated 1 transaction (2 changes, 2 rows in 1 PostgreSQL transaction)"), "\(second.stdout)")
        let name = try cluster.psql("SELECT name, \"loudName\" FROM \"TodoList\"", database: database)
        #expect(name.trimmingCharacters(in: .whitespacesAndNewlines) == "Renamed|RENAMED")
        let copy = try cluster.psql("SELECT \"listName\" FROM \"Item\"", database: database)
        #expect(copy.trimmingCharacters(in: .whitespacesAndNewlines) == "Renamed")
    }

    @Test func pullTakesTheServersChangesBackThenPushes() throws {
        let cluster = try PostgresCluster.shared
        let (database, url) = try cluster.makeDatabase()
        let (directory, path) = try HistoryToolTests.makeFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["PGPASSWORD": cluster.password]
        let first = try Tool.run("strata", ["replicate", path, "--to", url, "--pull", "--json"], environment: environment)
        #expect(first.status == 0 && first.stdout.contains("\"kind\":\"push\",\"copiedAll\":true"), "\(first.stdout)\(first.stderr)")
        _ = try cluster.psql("UPDATE \"TodoList\" SET name = 'From the server'", database: database)
        let second = try Tool.run("strata", ["replicate", path, "--to", url, "--pull"], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.hasPrefix("pulled 1 change (1 applied,"), "\(second.stdout)")
        // The derived copies the store recomputed went back.
        let loud = try cluster.psql("SELECT \"loudName\" FROM \"TodoList\"", database: database)
        #expect(loud.trimmingCharacters(in: .whitespacesAndNewlines) == "FROM THE SERVER")
        let store = try RecordStore(path: path, model: try todoModel())
        defer { try? store.close() }
        let name = try store.read { try $0.values(of: try $0.objects("TodoList")[0])?["name"] }
        #expect(name == .string("From the server"))
    }

    /// `--from`: a store made on a new machine from the dataset alone joins it with a range of
    /// keys of its own and a copy of its rows; a name or a file already taken, a database with no
    /// model, and contradictory options are refused.
    @Test func aStoreMadeFromTheDatasetJoinsIt() throws {
        let cluster = try PostgresCluster.shared
        let (database, url) = try cluster.makeDatabase()
        let (directory, path) = try HistoryToolTests.makeFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["PGPASSWORD": cluster.password]
        let first = try Tool.run("strata", ["replicate", path, "--to", url], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let joining = directory + "/joining.strata"
        let taken = try Tool.run("strata", ["replicate", joining, "--from", url], environment: environment)
        #expect(taken.status == 1 && taken.stderr.contains("a store named 'default' already"), "\(taken.stderr)")
        #expect(access(joining, F_OK) != 0)
        let joined = try Tool.run("strata", ["replicate", joining, "--from", url, "--name", "second"], environment: environment)
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(joined.stdout.hasPrefix("joined the dataset at ") && joined.stdout.contains(" rows into the store in ")
                    && !joined.stdout.contains("replicated"), "\(joined.stdout)")
        let info = try Tool.run("strata", ["info", joining])
        #expect(info.stdout.contains("primary keys: range 1 (1099511627776..<2199023255552)"), "\(info.stdout)")
        let original = try RecordStore(path: path, model: try todoModel())
        let copy = try RecordStore(path: joining, model: try todoModel())
        #expect(try ReplicatedContent.ofStore(copy) == ReplicatedContent.ofStore(original))
        let added = try copy.write { tx in try tx.insert("Tag", ["label": "from the second machine"]) }
        #expect(added.primaryKey == 1 << 40)
        try copy.close()
        try original.close()
        let pushed = try Tool.run("strata", ["replicate", joining, "--to", url, "--name", "second"], environment: environment)
        #expect(pushed.status == 0 && pushed.stdout.hasPrefix("replicated 1 transaction"), "\(pushed.stdout)\(pushed.stderr)")
        #expect(try cluster.psql("SELECT pk FROM \"Tag\" WHERE label = 'from the second machine'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == String(UInt64(1) << 40))
        let again = try Tool.run("strata", ["replicate", joining, "--from", url, "--name", "third"], environment: environment)
        #expect(again.status == 1 && again.stderr.contains("exists"), "\(again.stderr)")
        // The guide's command for another machine, pulling: it joins, and it takes what the
        // second store pushed.
        let third = directory + "/third.strata"
        let pulling = try Tool.run("strata", ["replicate", third, "--from", url, "--name", "third", "--pull"],
                                   environment: environment)
        #expect(pulling.status == 0 && pulling.stdout.contains("joined the dataset"), "\(pulling.stdout)\(pulling.stderr)")
        let thirdStore = try RecordStore(path: third, model: try todoModel())
        #expect(try thirdStore.read { reader in
            try reader.objects("Tag").contains { try reader.values(of: $0)?["label"] == .string("from the second machine") }
        })
        #expect(try thirdStore.read { try $0.keyRange() }.number == 2)
        try thirdStore.close()
        // Where each stands: its replica number, the others, tokens pushed and held, the queue.
        let status = try Tool.run("strata", ["info", joining, "--replication", url, "--name", "second"], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("replication 'second' to ") && status.stdout.contains("replica 1, beside default, third"),
                "\(status.stdout)")
        #expect(status.stdout.contains("(0 transactions to push, lag 0.000 s)"), "\(status.stdout)")
        let statusJSON = try Tool.run("strata", ["info", joining, "--replication", url, "--name", "second", "--json"],
                                      environment: environment)
        #expect(statusJSON.stdout.contains("\"replica\":1,") && statusJSON.stdout.contains("\"unpushedTransactions\":0,"),
                "\(statusJSON.stdout)")
        let unknown = try Tool.run("strata", ["info", joining, "--replication", url, "--name", "nobody"], environment: environment)
        #expect(unknown.status == 0 && unknown.stdout.contains("not registered in a dataset"), "\(unknown.stdout)\(unknown.stderr)")

        // A database nothing replicates to has no model to make a store with, unless given one.
        let (_, empty) = try cluster.makeDatabase()
        let fresh = directory + "/fresh.strata"
        let noModel = try Tool.run("strata", ["replicate", fresh, "--from", empty], environment: environment)
        #expect(noModel.status == 1 && noModel.stderr.contains("give --model FILE"), "\(noModel.stderr)")
        let garbage = directory + "/garbage.txt"
        try "entity TodoList\n  TodoList.name: attribute nosuchtype".write(toFile: garbage, atomically: true, encoding: .utf8)
        let badModel = try Tool.run("strata", ["replicate", fresh, "--from", empty, "--model", garbage], environment: environment)
        #expect(badModel.status == 1 && badModel.stderr.contains("model line"), "\(badModel.stderr)")
        #expect(access(fresh, F_OK) != 0)
        let missingModel = try Tool.run("strata", ["replicate", fresh, "--from", empty, "--model", directory + "/none.txt"],
                                        environment: environment)
        #expect(missingModel.status == 1 && missingModel.stderr.contains("cannot read"), "\(missingModel.stderr)")
        let schema = directory + "/model.txt"
        try todoModel().schemaLines.joined(separator: "\n").write(toFile: schema, atomically: true, encoding: .utf8)
        let made = try Tool.run("strata", ["replicate", fresh, "--from", empty, "--model", schema], environment: environment)
        #expect(made.status == 0 && made.stdout.hasPrefix("copied the store"), "\(made.stdout)\(made.stderr)")
        // The second machine leaves: its range retired, its name unusable after.
        let left = try Tool.run("strata", ["replicate", joining, "--to", url, "--name", "second", "--leave"],
                                environment: environment)
        #expect(left.status == 0 && left.stdout.contains("left the dataset as 'second'"), "\(left.stdout)\(left.stderr)")
        let afterLeaving = try Tool.run("strata", ["replicate", joining, "--to", url, "--name", "second"], environment: environment)
        #expect(afterLeaving.status == 1 && afterLeaving.stderr.contains("retired"), "\(afterLeaving.stderr)")
        // The third machine is gone: its name is retired without its store.
        let retired = try Tool.run("strata", ["replicate", directory + "/gone.strata", "--to", url, "--name", "third", "--leave"],
                                   environment: environment)
        #expect(retired.status == 0 && retired.stdout.hasPrefix("retired 'third' from the dataset without its store"),
                "\(retired.stdout)\(retired.stderr)")
        #expect(try cluster.psql("SELECT retired IS NOT NULL FROM strata_replicas WHERE name = 'third'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "t")
        let leaveFollowing = try Tool.run("strata", ["replicate", joining, "--to", url, "--leave", "--follow"])
        #expect(leaveFollowing.status != 0 && leaveFollowing.stderr.contains("--leave goes with --to"), "\(leaveFollowing.stderr)")
        let both = try Tool.run("strata", ["replicate", path, "--to", url, "--from", url])
        #expect(both.status != 0 && both.stderr.contains("--to or with --from"), "\(both.stderr)")
        let modelWithTo = try Tool.run("strata", ["replicate", path, "--to", url, "--model", schema])
        #expect(modelWithTo.status != 0 && modelWithTo.stderr.contains("--model goes with --from"), "\(modelWithTo.stderr)")
    }

    @Test func badInputFailsClearlyAndNeverPrintsThePassword() throws {
        let cluster = try PostgresCluster.shared
        let (_, url) = try cluster.makeDatabase()
        let (directory, path) = try HistoryToolTests.makeFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let badURL = try Tool.run("strata", ["replicate", path, "--to", "postgres://nobody@/db"])
        #expect(badURL.status == 1 && badURL.stderr.contains("invalid PostgreSQL URL: no host"), "\(badURL.stderr)")
        let secret = "Wr0ng-Secret-Do-Not-Print"
        let withPassword = url.replacingOccurrences(of: "\(cluster.user)@", with: "\(cluster.user):\(secret)@")
        let refused = try Tool.run("strata", ["replicate", path, "--to", withPassword])
        #expect(refused.status == 1 && refused.stderr.contains("refused the login"), "\(refused.stderr)")
        #expect(!(refused.stdout + refused.stderr).contains(secret))
        let fromEnvironment = try Tool.run("strata", ["replicate", path, "--to", url], environment: ["PGPASSWORD": secret])
        #expect(fromEnvironment.status == 1 && !(fromEnvironment.stdout + fromEnvironment.stderr).contains(secret))
        let missing = try Tool.run("strata", ["replicate", directory + "/none.strata", "--to", url])
        #expect(missing.status == 1 && missing.stderr.contains("no such file"), "\(missing.stderr)")
        let help = try Tool.run("strata", ["replicate", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--follow"))
    }
}
