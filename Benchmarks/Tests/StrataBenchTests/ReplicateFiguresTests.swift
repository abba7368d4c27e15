import Foundation
import Testing
@testable import strata_bench

/// The `replicate` benchmark's arithmetic and look-ups, without PostgreSQL: where it looks for
/// the `strata` tool, how it reads the tool's lines, each transaction's lag from the token
/// sightings, and what the CPU shares say limits a push.
struct ReplicateFiguresTests {
    @Test func theToolIsLookedForInTheRootCheckoutsBuild() {
        // make bench's and make test's bench builds, through the `release` link SwiftPM makes.
        let fromBench = StrataTool.candidates(executable: "/src/strata/.build/bench-build/x86_64-unknown-linux-gnu/release/strata-bench",
                                              currentDirectory: "/elsewhere")
        #expect(fromBench.prefix(2) == ["/src/strata/.build/release/strata", "/src/strata/.build/debug/strata"])
        #expect(fromBench.suffix(2) == ["/elsewhere/.build/release/strata", "/elsewhere/.build/debug/strata"])
        // A bench built in Benchmarks/.build (swift run --package-path Benchmarks): the root's beside it.
        let fromPackage = StrataTool.candidates(executable: "/src/strata/Benchmarks/.build/debug/strata-bench",
                                                currentDirectory: "/src/strata")
        #expect(fromPackage == ["/src/strata/.build/release/strata", "/src/strata/.build/debug/strata"])
    }

    @Test func pushLinesAreTheToolsJSON() throws {
        let line = try #require(PushLine(#"{"copiedAll":false,"transactions":3,"changes":9,"rows":7,"batches":1,"seconds":0.25,"token":42,"lagSeconds":0.004}"#))
        #expect(line == PushLine(copiedAll: false, transactions: 3, changes: 9, rows: 7, batches: 1, seconds: 0.25, token: 42,
                                 lagSeconds: 0.004))
        #expect(PushLine(#"{"copiedAll":true,"transactions":0,"changes":0,"rows":10,"batches":0,"seconds":1,"token":5}"#)?.lagSeconds == nil)
        #expect(PushLine("replicated 3 transactions") == nil)
    }

    @Test func aTransactionsLagEndsWhenItsTokenOrALaterOneIsSeen() {
        let t0 = Date(timeIntervalSince1970: 1_000)
        let commits: [(token: UInt64, date: Date)] = [(11, t0), (12, t0 + 0.010), (13, t0 + 0.020), (14, t0 + 0.030)]
        // 11 and 12 arrive together; 13 is never seen alone; 14 last.
        let sightings = [TokenWatcher.Sighting(token: 12, date: t0 + 0.015), .init(token: 14, date: t0 + 0.050)]
        let lags = TokenWatcher.lags(commits, sightings)
        #expect(lags.count == 4)
        for (lag, expected) in zip(lags, [0.005, 0.015, 0.020, 0.030]) { #expect(abs(lag - expected) < 1e-6, "\(lags)") }
        // A commit never seen is left out.
        #expect(TokenWatcher.lags([(15, t0)], sightings).isEmpty)
    }

    @Test func theCPUSharesSayWhatLimitsAPush() {
        func shares(tool: Double, postgres: Double, others: Double) -> CPUShares {
            CPUShares(wallSeconds: 1, toolSeconds: tool, postgresSeconds: postgres, benchSeconds: 0, otherSeconds: others, cores: 2)
        }
        #expect(shares(tool: 0.95, postgres: 0.3, others: 0).verdict == "the tool's CPU")
        #expect(shares(tool: 0.2, postgres: 0.9, others: 0).verdict == "PostgreSQL's CPU")
        #expect(shares(tool: 0.45, postgres: 0.5, others: 0.1).verdict.hasPrefix("the tool and PostgreSQL taking turns"))
        #expect(shares(tool: 0.55, postgres: 0.65, others: 0).verdict.hasPrefix("the tool and PostgreSQL working at once"))
        #expect(shares(tool: 0.45, postgres: 0.5, others: 1).verdict.contains("and the machine was saturated"))
        #expect(shares(tool: 0.2, postgres: 0.3, others: 1.3).verdict.hasPrefix("CPU contention: other processes held 1.3"))
        #expect(shares(tool: 0.2, postgres: 0.3, others: 0.1).verdict.hasPrefix("round trips"))
    }
}
