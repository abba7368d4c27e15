import Foundation
import Testing
import StrataRecords
import StrataStorage
import StrataTesting

/// `strata info`, `check` and `dump --entity` on a store with a record model.
@Suite struct RecordsToolTests {
    static func makeFile() throws -> (String, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-records-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/todo.strata"
        let model = try todoModel()
        let store = try RecordStore(path: path, model: model)
        try store.write { tx in
            let list = try tx.insert("TodoList", ["name": "Café \"Crème\""])
            for i in 0..<3 { try tx.insert("Item", ["title": "item \(i)", "amount": Decimal(i), "list": list]) }
        }
        try store.close()
        return (dir, path)
    }

    @Test func infoCheckAndDumpReadTheModel() throws {
        let (dir, path) = try Self.makeFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let info = try Tool.run("strata", ["info", path])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("TodoList: 1 rows") && info.stdout.contains("Item: 3 rows"), "\(info.stdout)")
        #expect(info.stdout.contains("itemCount: derived int64 = items.@count"), "\(info.stdout)")
        let check = try Tool.run("strata", ["check", path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("indexes and derived values verified"), "\(check.stdout)")
        let dump = try Tool.run("strata", ["dump", path, "--entity", "TodoList"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let line = dump.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["name"] as? String == "Café \"Crème\"")
        #expect(object?["itemCount"] as? Int == 3)
        #expect(object?["searchName"] as? String == "cafe \"creme\"")
    }

    /// A derived value that disagrees with its recomputation is a problem `check` reports.
    @Test func checkFindsAWrongDerivedValue() throws {
        let (dir, path) = try Self.makeFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Rewrite the list's row with a wrong itemCount through the storage layer.
        let records = try RecordStore(path: path)
        let list = try #require(try records.read { try $0.objects("TodoList").first })
        try records.close()
        let store = try Store(path: path)
        try store.write { tx in
            let rows = try #require(try tx.tree("rows:TodoList"))
            let key = withUnsafeBytes(of: list.primaryKey.bigEndian) { Array($0) }
            var row = try #require(try rows.get(key))
            // loudName = uppercase:(name) is stored in the row as its UTF-8 bytes: change one letter
            // (same length, so the row's lengths stay valid).
            let loud = Array("CAFÉ \"CRÈME\"".utf8)
            let at = try #require(row.indices.first { row[$0...].starts(with: loud) }, "loudName not found in the row")
            row[at] = UInt8(ascii: "K")
            try rows.put(key, row)
        }
        try store.close()
        let check = try Tool.run("strata", ["check", path])
        #expect(check.status == 1)
        #expect(check.stdout.contains("loudName"), "\(check.stdout)")
    }
}
