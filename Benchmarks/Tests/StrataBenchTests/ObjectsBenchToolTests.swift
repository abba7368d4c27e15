import Foundation
import Testing

/// `strata-bench objects` at a tiny scale (seconds): every workload runs on every engine (the
/// faults and observe figures on the object layer only), the stores Strata leaves pass their check, the JSON
/// has every row with the report's fields, and the engines read the same data and leave the
/// same stores (the digests in the JSON, compared here as well as by the command). Timing and
/// the targets are not asserted: the figures come from `make bench`.
@Suite(.serialized) struct ObjectsBenchToolTests {
    static let engines = ["objects", "objects-nohistory", "records", "grdb", "grdb-rows"]
    static let workloads = ["insert", "fetchall", "fetchindexed", "traverse", "update", "merge"]

    @Test func objectsBenchmarkRunsAndEnginesAgree() throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("objects-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: json) }
        let run = try BenchTool.run([
            "objects", "--repeat", "1", "--items", "600", "--items-per-list", "200", "--batch", "100", "--queries", "60",
            "--query-batch", "10", "--traversals", "3", "--updates", "50", "--merges", "40", "--faults", "3000",
            "--observed", "200", "--observed-changes", "20", "--json", json,
        ])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        // insert, update and merge stores of the three Strata engines.
        #expect(run.stdout.contains("objects check (read-only reopen after close, untimed): 9/9 files clean"), "\(run.stdout)")
        #expect(run.stdout.contains("bytes per registered fault (3000 faults held)"), "\(run.stdout)")
        #expect(run.stdout.contains("peak RSS per engine"), "\(run.stdout)")
        // 20 of 200 observed objects changed by another context's save: exactly their observers, once.
        #expect(run.stdout.contains("20 of 200 observed objects changed")
                && run.stdout.contains("observers told 20 (each once: yes), of unchanged objects 0"), "\(run.stdout)")

        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let rows = try #require(object["results"] as? [[String: Any]])
        #expect(rows.count == Self.workloads.count * Self.engines.count + 2)   // faults and observe: objects only
        func row(_ w: String, _ e: String) -> [String: Any]? {
            rows.first { $0["workload"] as? String == w && $0["engine"] as? String == e }
        }
        for w in Self.workloads {
            for e in Self.engines {
                let r = row(w, e)
                #expect(r != nil, "\(w) \(e) missing")
                for f in BenchToolTests.fields { #expect(r?.keys.contains(f) == true, "\(w) \(e): no \(f)") }
                #expect((r?["ops_per_s"] as? Double ?? 0) > 0, "\(w) \(e)")
            }
        }
        #expect((row("faults", "objects")?["ops_per_s"] as? Double ?? 0) > 0)
        #expect(row("faults", "grdb") == nil && row("faults", "grdb-rows") == nil)
        #expect((row("observe", "objects")?["ops_per_s"] as? Double ?? 0) > 0 && row("observe", "records") == nil)
        let perFault = try #require((object["bytes_per_fault"] as? [String: Any])?["rss"] as? Double)
        #expect(perFault > 0)
        // The targets against GRDB at its best take the faster GRDB engine on every workload.
        for figure in ["speedup_objects_over_fastest_grdb", "speedup_records_over_fastest_grdb", "speedup_objects_over_grdb_rows"] {
            let byWorkload = try #require(object[figure] as? [String: Any], "\(figure) missing")
            #expect(Set(byWorkload.keys) == Set(Self.workloads), "\(figure): \(byWorkload)")
            #expect(byWorkload.values.allSatisfy { ($0 as? Double ?? 0) > 0 }, "\(figure): \(byWorkload)")
        }
        #expect(run.stdout.contains("objects ÷ fastest GRDB (grdb"), "\(run.stdout)")

        // What each engine read, and what its store held after: the same for every engine.
        let digests = try #require(object["digests"] as? [String: [String: [String: Any]]])
        let expectedReads = ["fetchall": 600, "fetchindexed": 60, "traverse": 600, "merge": 40]
        for w in Self.workloads {
            let byEngine = try #require(digests[w], "\(w): no digests")
            let reads = Self.engines.map { byEngine[$0]?["read"] as? [String: AnyHashable] }
            let stores = Self.engines.map { byEngine[$0]?["store"] as? [String: AnyHashable] }
            #expect(reads.allSatisfy { $0 != nil && $0 == reads[0] }, "\(w): \(reads)")
            #expect(stores.allSatisfy { $0 == stores[0] }, "\(w): \(stores)")
            if let n = expectedReads[w] { #expect(reads[0]?["objects"] as? Int == n, "\(w): \(reads[0] ?? [:])") }
            if ["insert", "update", "merge"].contains(w) {
                #expect(stores[0]?["objects"] as? Int == 600 && stores[0]?["lists"] as? Int == 3, "\(w): \(stores[0] ?? [:])")
            }
        }
        // The update changed the store: its checksum is not the insert store's.
        #expect((digests["update"]?["objects"]?["store"] as? [String: AnyHashable])?["checksum"]
                != (digests["insert"]?["objects"]?["store"] as? [String: AnyHashable])?["checksum"])
    }

    /// `--large-items`: insert, fetchall and traverse run again with more items, in a second
    /// table and under `growth` in the JSON, the engines agreeing there too.
    @Test func aSecondPassShowsTheGrowthOfEachCost() throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("objects-growth-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: json) }
        let run = try BenchTool.run([
            "objects", "--repeat", "1", "--items", "400", "--items-per-list", "200", "--batch", "100", "--traversals", "2",
            "--workloads", "insert,fetchall,traverse,update", "--updates", "20", "--large-items", "1000", "--json", json,
        ])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("strata-bench objects, growth: insert, fetchall, traverse with 1000 items in 5 lists of 200"),
                "\(run.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        #expect((object["results"] as? [[String: Any]])?.count == 4 * Self.engines.count)
        let growth = try #require(object["growth"] as? [String: Any], "no growth pass in the JSON")
        let rows = try #require(growth["results"] as? [[String: Any]])
        #expect(Set(rows.compactMap { $0["workload"] as? String }) == ["insert", "fetchall", "traverse"])
        #expect(rows.count == 3 * Self.engines.count)
        #expect(rows.allSatisfy { ($0["ops_per_s"] as? Double ?? 0) > 0 }, "\(rows)")
        let digests = try #require(growth["digests"] as? [String: [String: [String: Any]]])
        for e in Self.engines {
            #expect((digests["fetchall"]?[e]?["read"] as? [String: AnyHashable])?["objects"] as? Int == 1000, "\(e)")
            #expect((digests["insert"]?[e]?["store"] as? [String: AnyHashable])?["objects"] as? Int == 1000, "\(e)")
        }
    }
}
