import Foundation
import Testing

/// `strata-bench replicate` at a tiny scale (seconds, most of them the PostgreSQL cluster's
/// start): it finds the root package's `strata` tool (`make test` builds it in release before
/// these tests), copies, pushes with `--batch 1000` and `--batch 1`, follows at a steady rate,
/// converges three stores, and PostgreSQL equals the store after every push; the JSON has every phase's row with the
/// report's fields and the lag. Timing and the target are not asserted: the figures come from
/// `make bench`.
@Suite(.serialized) struct ReplicateBenchToolTests {
    @Test func replicateBenchmarkRunsAndPostgreSQLEqualsTheStore() throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("replicate-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: json) }
        let run = try BenchTool.run([
            "replicate", "--lists", "20", "--items", "300", "--tags", "5", "--transactions", "300", "--rate", "200",
            "--follow-seconds", "1", "--json", json,
        ])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("PostgreSQL equalled the store after every push"), "\(run.stdout)")
        #expect(run.stdout.contains("target (≥ 50,000 rows/s pushed; "), "\(run.stdout)")
        #expect(run.stdout.contains("what limits the push at batch-1000: "), "\(run.stdout)")

        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let rows = try BenchToolTests.results(json)
        func firstRun(_ workload: String, _ engine: String) -> [String: Any]? {
            (rows.first { $0["workload"] as? String == workload && $0["engine"] as? String == engine }?["runs"] as? [[String: Any]])?.first
        }
        let phases = [("copy", "batch-1000"), ("copy", "batch-1"), ("push", "batch-1000"), ("push", "batch-1"),
                      ("follow", "batch-1000"), ("converge", "batch-1000")]
        #expect(rows.count == phases.count)
        for (workload, engine) in phases {
            let row = rows.first { $0["workload"] as? String == workload && $0["engine"] as? String == engine }
            for f in BenchToolTests.fields { #expect(row?.keys.contains(f) == true, "\(workload) \(engine): no \(f)") }
            #expect((row?["ops_per_s"] as? Double ?? 0) > 0, "\(workload) \(engine)")
            #expect(firstRun(workload, engine)?["digestEqual"] as? Bool == true, "\(workload) \(engine)")
        }
        // Both pushes applied the same transactions (a commit that changed nothing records none),
        // grouped into one PostgreSQL transaction and one each.
        let grouped = try #require(firstRun("push", "batch-1000")), single = try #require(firstRun("push", "batch-1"))
        let transactions = try #require(grouped["transactions"] as? Int)
        #expect(transactions > 250 && transactions <= 300 && single["transactions"] as? Int == transactions)
        #expect(grouped["batches"] as? Int == 1 && single["batches"] as? Int == transactions)
        #expect(firstRun("copy", "batch-1000")?["ops"] as? Int == firstRun("copy", "batch-1")?["ops"] as? Int)
        // The steady phase: every paced commit pushed, each transaction's lag measured.
        let follow = try #require(firstRun("follow", "batch-1000"))
        #expect(follow["committed"] as? Int == 200 && (follow["pushes"] as? Int ?? 0) > 0, "\(follow)")
        // Three stores: every paced commit seen in another store's file, and all three converged.
        let converge = try #require(firstRun("converge", "batch-1000"))
        #expect(converge["committed"] as? Int == 200 && (converge["lagMedianSeconds"] as? Double ?? 0) > 0, "\(converge)")
        #expect(run.stdout.contains("converge: the three stores and PostgreSQL hold the same rows"), "\(run.stdout)")
        let lag = try #require(object["lag_s"] as? [String: Any])
        #expect((lag["median"] as? Double ?? 0) > 0 && (lag["max"] as? Double ?? 0) >= (lag["median"] as? Double ?? 1))
        let target = try #require(object["target"] as? [String: Any])
        #expect((target["ratio"] as? Double ?? 0) > 0)
    }

    @Test func aToolThatIsNotThereIsReported() throws {
        let run = try BenchTool.run(["replicate", "--strata", "/nonexistent/strata", "--transactions", "10"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("no executable strata tool at /nonexistent/strata (from --strata)"), "\(run.stderr)")
    }
}
