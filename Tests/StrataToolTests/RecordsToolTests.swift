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

    /// A defect found from outside, and its class: `strata check` on stores of random models (every rule
    /// kind among them) after random writes, refused ones included, is clean, as the library's
    /// check with the program's model is. A pattern the schema text cannot tell from two rules
    /// is a note, not a problem.
    @Test func checkAgreesWithTheLibraryOnRandomModels() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-agree-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for k in 0..<4 {
            let seed = mixSeed(0x700_1C4E_C4, UInt64(k))
            let path = "\(dir)/\(k).strata"
            let model = try RandomModel.make(seed: seed)
            let store = try RecordStore(path: path, model: model)
            _ = try RandomModelWorkload.run(store, seed: seed, transactions: 30)
            #expect(try store.read { try $0.checkRecords() } == [], "seed \(seed)")
            try store.close()
            let check = try Tool.run("strata", ["check", path])
            let text = model.schemaLines.joined(separator: "\n")
            #expect(check.status == 0, "seed \(seed): \(check.stdout)\(check.stderr)\n\(text)")
            #expect(check.stdout.contains("indexes and derived values verified") && !check.stdout.contains("note:"), "seed \(seed): \(check.stdout)")
        }
        let path = "\(dir)/ambiguous.strata"
        let store = try RecordStore(path: path, model: try Model {
            Entity("Code") { AttributeDescription("text", .string, validation: [.pattern("[a-z]+, min 3"), .maximumLength(20)]) }
        })
        try store.write { tx in _ = try tx.insert("Code", ["text": "abc, min 3"]) }
        try store.close()
        let check = try Tool.run("strata", ["check", path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("note:") && check.stdout.contains("pattern [a-z]+, min 3, maxLength 20") && !check.stdout.contains("problem:"), "\(check.stdout)")
    }
}
