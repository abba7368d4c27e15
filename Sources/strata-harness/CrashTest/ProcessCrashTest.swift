import ArgumentParser
import Foundation
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Real process kills

struct ProcessCrashTest {
    let seed: UInt64
    let kills: Int
    let verbose: Bool

    /// Digests of the states after steps 0, 1, 2, …, computed as needed.
    final class States {
        let seed: UInt64
        var model: [String: [[UInt8]: UInt64]] = [:]
        var digests: [ContentDigest] = [ContentDigest()]
        init(seed: UInt64) { self.seed = seed }
        func digest(_ step: Int) -> ContentDigest {
            while digests.count <= step {
                ProcessWorkload.apply(ProcessWorkload.ops(seed: seed, step: digests.count), to: &model)
                digests.append(ContentDigest(model: model))
            }
            return digests[step]
        }
    }

    func run() throws -> CrashCounts {
        let dir = try makeTemporaryDirectory("strata-crash-test")
        let path = dir + "/store.strata"
        var counts = CrashCounts()
        let states = States(seed: seed)
        var rng = SplitMix64(seed: mixSeed(seed, 0x4B49_4C4C))
        let start = monotonicSeconds()
        var totalAcks = 0
        var verifiedStep = 0
        for kill in 0..<kills {
            // Mostly mid-run; one kill in four within the writer's start (open, recovery, first
            // commits).
            let delay = Double(rng.below(4) == 0 ? rng.int(0...15) : rng.int(10...400)) / 1000
            let child = try ChildProcess(arguments: ["crash-test-writer", "--path", path, "--seed", String(seed)])
            let began = monotonicSeconds()
            var lastAck = -1
            var acks = 0
            func take(_ line: String) {
                if let step = Int(line) {
                    lastAck = max(lastAck, step)
                    acks += 1
                }
            }
            while true {
                let left = delay - (monotonicSeconds() - began)
                if left <= 0 { break }
                if let line = child.readLine(timeoutMilliseconds: Int32(max(1, left * 1000))) { take(line) }
                else if child.atEOF { break }
            }
            child.kill()
            // Lines already written were acknowledged before the kill: read them to the end.
            while let line = child.readLine(timeoutMilliseconds: -1) { take(line) }
            let status = child.wait()
            totalAcks += acks
            let label = "kill \(kill + 1) after \(String(format: "%.0f", delay * 1000))ms "
                + "(\(acks) commits acknowledged, last step \(lastAck))"
            if status.signal != SIGKILL {
                counts.record(.unrecoverable("the writer ended by itself (\(status))"), label)
                continue
            }
            // Before the first acknowledgement of this writer, the store is where the last
            // check left it (or the writer's recovery, or an unacknowledged commit after it).
            let verdict = verify(path: path, states: states, low: max(lastAck, verifiedStep),
                                 acknowledged: lastAck >= 0)
            if case .ok(let step) = verdict { verifiedStep = step }
            if verbose { printError("\(label): \(verdict)") }
            counts.record(verdict, label)
        }
        let elapsed = monotonicSeconds() - start
        printError("crash-test: \(kills) kills in \(String(format: "%.1f", elapsed))s, "
                   + "\(totalAcks) acknowledged commits")
        if counts.lost + counts.corrupt + counts.unrecoverable == 0 {
            removeDirectory(dir)
        } else {
            printError("crash-test: store kept for inspection: \(path)")
        }
        return counts
    }

    /// The store must hold the state after a step ≥ `low` (the last acknowledged one, or the
    /// one the previous check found) and ≤ `low + 1` (the writer's commit in flight).
    func verify(path: String, states: States, low: Int, acknowledged: Bool) -> CrashVerdict {
        // The store's own step decides where the unacknowledged history stands: read it first.
        var readOnlyContent: ContentDigest?
        do {
            var options = ProcessWorkload.options()
            options.readOnly = true
            let reader = try Store(path: path, options: options)
            readOnlyContent = try reader.read { try digestContent($0) }
            try reader.close()
        } catch {
            // A writer killed before its first commit may leave no store, or an unfinished one.
            if low > 0 || access(path, F_OK) == 0 { return CrashVerdict.from(error, "read-only open") }
        }
        do {
            let store = try Store(path: path, options: ProcessWorkload.options())
            let (content, step) = try store.read { tx -> (ContentDigest, Int) in
                let digest = try digestContent(tx)
                guard let stored = try tx.tree(ProcessWorkload.metaTree)?.get(ProcessWorkload.metaKey),
                      stored.count == 8 else { return (digest, 0) }
                return (digest, Int(stored.littleEndian(at: 0, width: 8)))
            }
            if let readOnlyContent, readOnlyContent != content {
                return .corrupt("read-only open saw \(readOnlyContent.summary), "
                                + "the writer's recovery \(content.summary)")
            }
            guard step <= low + 1 else {
                return .corrupt("the store says step \(step), but only \(low) was acknowledged "
                                + "(or found before) and one more started")
            }
            guard states.digest(step) == content else {
                return .corrupt("content after step \(step) is not the committed state of that step "
                                + "(\(content.summary) vs \(states.digest(step).summary))")
            }
            if step < low {
                let how = acknowledged ? "acknowledged" : "found by the previous check"
                return .lost("recovered step \(step), but step \(low) was \(how)")
            }
            let report = try store.check()
            if !report.isClean { return .corrupt("check: \(report.problems.joined(separator: "; "))") }
            // A new write must survive close and reopen; then it is removed again, so the next
            // writer continues from the model's state.
            let value = Array("after step \(step)".utf8)
            try store.write { tx in
                try tx.treeCreatingIfMissing(SimulatedCrashTest.probeTree).put(Array("k".utf8), value)
            }
            try store.close()
            let again = try Store(path: path, options: ProcessWorkload.options())
            var expected = content
            let probeSum = Array("k".utf8).withUnsafeBytes { entryHash(key: $0, valueHash: hashBytes(value)) }
            expected.trees[SimulatedCrashTest.probeTree] = ContentDigest.Tree(count: 1, sum: probeSum)
            let after = try again.read { try digestContent($0) }
            if after != expected {
                try? again.close()
                return .corrupt("a write after recovery did not survive close+reopen")
            }
            try again.write { tx in try tx.dropTree(SimulatedCrashTest.probeTree) }
            try again.close()
            return .ok(state: step)
        } catch {
            return CrashVerdict.from(error, "recovery")
        }
    }
}
