import Foundation
import Testing

/// `strata-bench`, run at a tiny scale: every workload on every engine finishes, the engines agree
/// on what their stores hold (the command fails otherwise), every store Strata leaves passes its
/// check, and the JSON has one row per workload and engine with every field of `fields`. Timing
/// is not asserted here; the figures come from `make bench`.
@Suite(.serialized) struct BenchToolTests {
    static let fields = ["workload", "engine", "ops_per_s", "ops_per_s_to_close", "p50_us", "p99_us", "bytes", "fsyncs_per_commit",
                         "peak_rss_bytes", "spread", "runs", "ratios"]

    static func results(_ path: String) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
        return try #require((object as? [String: Any])?["results"] as? [[String: Any]])
    }

    @Test func recordsBenchmarkRunsAndEnginesAgree() throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("records-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: json) }
        let run = try BenchTool.run([
            "records", "--repeat", "1", "--lists", "20", "--items-per-list", "20", "--list-sizes", "5,50", "--inserts", "200",
            "--setup-items", "500", "--moves", "200", "--renames", "3", "--fanout-lists", "3", "--fanout-items", "100",
            "--queries", "200", "--notes", "300", "--text-queries", "100", "--text-updates", "100", "--json", json,
        ])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        // Nine stores of each Strata engine (strata, strata-history).
        #expect(run.stdout.contains("strata check (read-only reopen after close, untimed): 18/18 files clean"), "\(run.stdout)")
        #expect(run.stdout.contains("per-insert cost, lists of 50 ÷ lists of 5: strata "), "\(run.stdout)")
        let rows = try Self.results(json)
        let workloads = ["bulkinsert", "insert_list5", "insert_list50", "moveitems", "renamefanout", "prefixsearch", "fetchindexed",
                         "batchupdate", "batchdelete", "textindex", "textsearch", "textfilter", "textupdate"]
        let engines = ["strata", "strata-history", "sqlite-recount", "sqlite-incremental"]
        #expect(rows.count == workloads.count * engines.count)
        for w in workloads {
            for e in engines {
                let row = rows.first { $0["workload"] as? String == w && $0["engine"] as? String == e }
                #expect(row != nil, "\(w) \(e) missing")
                for f in Self.fields { #expect(row?.keys.contains(f) == true, "\(w) \(e): no \(f)") }
                #expect((row?["ops_per_s"] as? Double ?? 0) > 0, "\(w) \(e)")
            }
        }
    }

    @Test func kvBenchmarkRuns() throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("kv-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: json) }
        let run = try BenchTool.run(["kv", "--count", "3000", "--repeat", "1", "--sync-commits", "30", "--json", json])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let rows = try Self.results(json)
        #expect(rows.count == 7 * 3)  // 7 workloads (readseq and readseq-warm) × 3 engines
        for row in rows {
            for f in Self.fields { #expect(row.keys.contains(f), "\(row["workload"] ?? "?") \(row["engine"] ?? "?"): no \(f)") }
            #expect((row["ops_per_s"] as? Double ?? 0) > 0)
        }
        // Every run is kept with its repeat; Strata's rows carry a paired ratio to each baseline,
        // and the fills count their close.
        for row in rows { #expect((row["runs"] as? [[String: Any]])?.map { $0["repeat"] as? Int } == [1]) }
        let fill = try #require(rows.first { $0["workload"] as? String == "fillrandom" && $0["engine"] as? String == "strata" })
        #expect(Set(((fill["ratios"] as? [String: Any]) ?? [:]).keys) == ["sqlite", "lmdb"])
        #expect((fill["ops_per_s_to_close"] as? Double ?? .infinity) < (fill["ops_per_s"] as? Double ?? 0))
        let strataSync = rows.first { $0["workload"] as? String == "fillsync" && $0["engine"] as? String == "strata" }
        #expect(strataSync?["fsyncs_per_commit"] as? Double == 1.0, "one fsync per durable commit")
    }
}
