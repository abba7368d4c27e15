import Foundation
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
