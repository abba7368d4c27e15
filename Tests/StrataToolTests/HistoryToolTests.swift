import Foundation
import Testing
import StrataRecords
import StrataStorage
import StrataTesting

/// `strata history` and the history line of `strata info`, on a store that records history.
@Suite struct HistoryToolTests {
    static func makeFile() throws -> (directory: String, path: String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-history-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/todo.strata"
        let store = try RecordStore(path: path, model: try todoModel(), history: .on)
        let list = try store.write { tx in
            tx.author = "importer"
            let list = try tx.insert("TodoList", ["name": "Café"])
            try tx.insert("Item", ["title": "Milk", "amount": Decimal(2), "list": list])
            return list
        }
        try store.write { tx in try tx.update(list, ["name": "Tea \"house\""]) }
        try store.write { tx in
            let tag = try tx.insert("Tag", ["label": "urgent"])
            try tx.add(tag, to: "tags", of: list)
        }
        try store.close()
        return (directory, path)
    }

    @Test func historyPrintsEachTransactionAsTextAndJSON() throws {
        let (directory, path) = try Self.makeFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = try Tool.run("strata", ["history", path])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("token ") }.count == 3, "\(text.stdout)")
        #expect(lines[0].hasPrefix("token 1  ") && lines[0].contains("author \"importer\""), "\(lines[0])")
        #expect(lines.contains { $0.hasPrefix("  insert TodoList/1 ") && $0.contains("name=\"Café\"")
            && $0.contains("itemCount=1 (derived)") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("  insert Item/1 ") && $0.contains("list=TodoList/1") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("  update TodoList/1 ") && $0.contains("name=\"Tea \\\"house\\\"\"") },
                "\(text.stdout)")
        #expect(lines.contains { $0 == "  link TodoList/1.tags Tag/1" }, "\(text.stdout)")

        let json = try Tool.run("strata", ["history", path, "--json", "--since", "1"])
        #expect(json.status == 0, "\(json.stderr)")
        let objects = try json.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["token"] as? Int } == [2, 3])
        let update = try #require((objects[0]["changes"] as? [[String: Any]])?.first { $0["entity"] as? String == "TodoList" })
        #expect(update["kind"] as? String == "update")
        #expect((update["values"] as? [String: Any])?["name"] as? String == "Tea \"house\"")
        #expect((update["derived"] as? [String])?.contains("searchName") == true)

        let limited = try Tool.run("strata", ["history", path, "--limit", "1"])
        #expect(limited.stdout.split(separator: "\n").filter { $0.hasPrefix("token ") }.count == 1)
        let info = try Tool.run("strata", ["info", path])
        #expect(info.stdout.contains("history: recorded, 3 transactions kept (tokens 1...3)"), "\(info.stdout)")
        #expect(info.stdout.contains("primary keys: range 0 (1..<1099511627776)"), "\(info.stdout)")
        let check = try Tool.run("strata", ["check", path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func aPurgedTokenAndBadInputAreClearErrors() throws {
        let (directory, path) = try Self.makeFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RecordStore(path: path, model: try todoModel())
        try store.purgeHistory(through: HistoryToken(2))
        try store.close()
        let purged = try Tool.run("strata", ["history", path, "--since", "1"])
        #expect(purged.status == 1 && purged.stderr.contains("purged through 2"), "\(purged.stderr)")
        let kept = try Tool.run("strata", ["history", path])
        #expect(kept.status == 0 && kept.stdout.hasPrefix("token 3 "), "\(kept.stdout)\(kept.stderr)")
        let future = try Tool.run("strata", ["history", path, "--since", "99"])
        #expect(future.status == 1 && future.stderr.contains("after the store's newest"), "\(future.stderr)")
        let negative = try Tool.run("strata", ["history", path, "--limit", "-1"])
        #expect(negative.status == 1, "\(negative.stderr)")
        let info = try Tool.run("strata", ["info", path])
        #expect(info.stdout.contains("purged through token 2"), "\(info.stdout)")
    }
}
