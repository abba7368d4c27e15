import Foundation
import StrataRecords
import StrataStorage
import StrataTesting

/// Crash rounds for the record layer: a seeded workload of record transactions
/// (``RecordsWorkload`` over ``todoModel()``: inserts, moves between lists, deletes that
/// cascade, many-to-many links, changes that fan out to derived copies) on a simulated file
/// system, stopped at a random write or sync and crashed.
/// After recovery: the rows are exactly the state after some committed transaction, every
/// acknowledged one included; every derived value and index agrees with the rows
/// (`checkRecords()`); the page file checks clean; and a new transaction commits.
struct RecordsCrashTest {
    let seed: UInt64
    let rounds: Int
    let verbose: Bool
    static let path = "/db/records.strata"
    static let transactions = 40

    static func options(_ fs: SimulatedFileSystem) -> StoreOptions {
        var options = StoreOptions(durability: .full)
        options.fileSystem = fs
        options.syncIntervalMilliseconds = 3_600_000
        options.compactOnCloseGarbageRatio = 1
        options.checkpointLogBytes = 16 << 10
        options.checkpointDirtyBytes = 128 << 10
        options.checkpointStepPages = 3  // checkpoints spread over several commits, crashes between
        options.cacheBytes = 8 << 20
        return options
    }

    func run(into counts: inout CrashCounts) throws {
        let model = try todoModel()
        var reached: [Int: Int] = [:]
        defer {
            if rounds > 0 {
                printError("crash-test: record-layer recoveries reached \(reached.count) distinct committed states "
                           + "(\(reached[0] ?? 0) rounds the empty start, "
                           + "\(reached[RecordsCrashTest.transactions] ?? 0) the final state)")
            }
        }
        for round in 0..<rounds {
            let workloadSeed = mixSeed(seed, UInt64(round / 8), 0x5243)
            let crashSeed = mixSeed(seed, UInt64(round), 0x5243_5253)
            let (verdict, label) = try self.round(model, workloadSeed: workloadSeed, crashSeed: crashSeed)
            if verbose { printError("records round \(round) \(label): \(verdict)") }
            if case .ok(let state) = verdict { reached[state, default: 0] += 1 }
            counts.record(verdict, "records round \(round) (seed \(seed), \(label))")
        }
    }

    /// One round: the uncrashed run's states and call count, then a run stopped at a random
    /// call, crashed and verified.
    func round(_ model: Model, workloadSeed: UInt64, crashSeed: UInt64) throws -> (CrashVerdict, String) {
        // The reference run.
        let reference = SimulatedFileSystem()
        var states: [[String]] = []
        do {
            let store = try RecordStore(path: RecordsCrashTest.path, model: model,
                                        options: RecordsCrashTest.options(reference))
            states.append(try store.read { try RecordsWorkload.digest($0) })
            for transaction in 0..<RecordsCrashTest.transactions {
                try store.write { try RecordsWorkload.step($0, seed: workloadSeed, transaction: transaction) }
                states.append(try store.read { try RecordsWorkload.digest($0) })
            }
            try store.close()
        } catch {
            return (.corrupt("the uncrashed workload failed: \(error)"), "reference")
        }
        var rng = SplitMix64(seed: crashSeed)
        let stopAt = rng.below(max(1, reference.mutationCount))
        let fs = SimulatedFileSystem()
        fs.crashAfter(operations: stopAt)
        var low = 0, high = 0
        do {
            let store = try RecordStore(path: RecordsCrashTest.path, model: model,
                                        options: RecordsCrashTest.options(fs))
            for transaction in 0..<RecordsCrashTest.transactions {
                high = transaction + 1
                try store.write { try RecordsWorkload.step($0, seed: workloadSeed, transaction: transaction) }
                low = transaction + 1  // full durability: acknowledged means durable
            }
            try store.close()
        } catch {
            if !fs.hasCrashed {
                return (.corrupt("the workload failed before its crash point: \(error)"), "crashAfter(\(stopAt))")
            }
        }
        let summary = fs.crash(seed: crashSeed)
        let label = "crashAfter(\(stopAt)) of \(reference.mutationCount) calls, crash \(summary)"
        do {
            let store: RecordStore
            do {
                store = try RecordStore(path: RecordsCrashTest.path, model: model,
                                        options: RecordsCrashTest.options(fs))
            } catch let error as StrataError {
                // Before the first commit was durable there may be no store (or no model) yet.
                if low == 0, case .fileNotFound = error { return (.ok(state: 0), label) }
                if low == 0, case .notAStrataFile = error { return (.ok(state: 0), label) }
                throw error
            }
            let content = try store.read { try RecordsWorkload.digest($0) }
            guard let state = (low...high).first(where: { states[$0] == content }) else {
                try? store.close()
                if let recovered = states.firstIndex(of: content), recovered < low {
                    return (.lost("recovered state \(recovered), but \(low) commits were acknowledged"), label)
                }
                return (.corrupt("recovered rows are no committed state (allowed \(low)...\(high))"), label)
            }
            let problems = try store.read { try $0.checkRecords() }
            if !problems.isEmpty {
                try? store.close()
                return (.corrupt("derived values or indexes disagree with the rows after recovery to state \(state): "
                                 + problems.prefix(3).joined(separator: "; ")), label)
            }
            let report = try store.storage.check()
            if !report.isClean {
                return (.corrupt("check after recovery: \(report.problems.prefix(3).joined(separator: "; "))"), label)
            }
            try store.write { try RecordsWorkload.step($0, seed: workloadSeed, transaction: 1000) }
            let after = try store.read { try $0.checkRecords() }
            try store.close()
            if !after.isEmpty {
                return (.corrupt("a commit after recovery left: \(after.prefix(3).joined(separator: "; "))"), label)
            }
            return (.ok(state: state), label)
        } catch {
            return (CrashVerdict.from(error, "recovery"), label)
        }
    }
}
