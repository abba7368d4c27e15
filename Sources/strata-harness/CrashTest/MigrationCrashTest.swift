import Foundation
import StrataRecords
import StrataStorage
import StrataTesting

/// Crash rounds for migrations: a store of ``todoModel()`` filled by ``RecordsWorkload``, opened
/// with a two-stage plan (version 1 → 2 lightweight, adding an entity; 2 → 3 custom, the same
/// schema, code that renames every list — derived copies fan out — and fills the new entity from
/// the old lists' derived values), stopped at a random write or sync of the migration and
/// crashed. After recovery the store is the old one (version 1, its rows exactly as before) or
/// the migrated one (version 3, its rows exactly as the uncrashed migration left them), never
/// between; derived values and indexes agree with the rows; and opened with the plan it ends
/// migrated. A migration that returned (full durability) must have survived.
struct MigrationCrashTest {
    let seed: UInt64
    let rounds: Int
    let verbose: Bool
    static let path = "/db/records.strata"
    static let transactions = 20

    struct Versions {
        let v1: Model
        let v3: Model
        let plan: MigrationPlan
    }

    static func versions() throws -> Versions {
        let v1 = try Model(version: 1, entities: todoEntities())
        let withCopies = todoEntities() + [Entity("ListCopy") {
            AttributeDescription("name", .string)
            AttributeDescription("itemCount", .int64, default: 0)
            AttributeDescription("total", .decimal, default: Decimal(0))
            DerivedAttributeDescription("searchName", .string, "canonical:(name)")
            FetchIndex("searchName")
        }]
        let v2 = try Model(version: 2, entities: withCopies)
        let v3 = try Model(version: 3, entities: withCopies)
        let plan = try MigrationPlan(stages: [
            .lightweight(from: v1, to: v2),
            .custom(from: v2, to: v3) { old, new in
                for list in try old.objects("TodoList") {
                    let values = try old.values(of: list) ?? [:]
                    guard case .string(let name) = values["name"] else { continue }
                    try new.update(list, ["name": name + " ✓"])
                    try new.insert("ListCopy", ["name": name, "itemCount": values["itemCount"] ?? .int(0),
                                                "total": values["total"] ?? .decimal(0)])
                }
            },
        ])
        return Versions(v1: v1, v3: v3, plan: plan)
    }

    func run(into counts: inout CrashCounts) throws {
        let versions = try Self.versions()
        var outcomes = [0, 0]
        defer {
            if rounds > 0 {
                printError("crash-test: migration rounds recovered the old store \(outcomes[0]) times, "
                           + "the migrated one \(outcomes[1]) times")
            }
        }
        for round in 0..<rounds {
            let workloadSeed = mixSeed(seed, UInt64(round), 0x4D49_47)
            let crashSeed = mixSeed(seed, UInt64(round), 0x4D49_4752)
            let (verdict, label) = self.round(versions, workloadSeed: workloadSeed, crashSeed: crashSeed)
            if verbose { printError("migration round \(round) \(label): \(verdict)") }
            if case .ok(let state) = verdict { outcomes[state] += 1 }
            counts.record(verdict, "migration round \(round) (seed \(seed), \(label))")
        }
    }

    /// The digest of the store at `fs`, opened with `model` (and `migration`), after checking it.
    static func checkedDigest(_ fs: SimulatedFileSystem, _ model: Model,
                              _ migration: MigrationPolicy = .none) throws -> [String] {
        let store = try RecordStore(path: path, model: model, options: RecordsCrashTest.options(fs), migration: migration)
        defer { try? store.close() }
        let problems = try store.read { try $0.checkRecords() }
        guard problems.isEmpty else {
            throw ToolError.wrongResult("derived values or indexes disagree with the rows: "
                                 + problems.prefix(3).joined(separator: "; "))
        }
        let report = try store.storage.check()
        guard report.isClean else { throw ToolError.wrongResult("check: \(report.problems.prefix(3).joined(separator: "; "))") }
        return try store.read { try RecordsWorkload.digest($0) }
    }

    func round(_ versions: Versions, workloadSeed: UInt64, crashSeed: UInt64) -> (CrashVerdict, String) {
        // The store before the migration, and the uncrashed migration's result.
        let before = SimulatedFileSystem()
        let old: [String], migrated: [String], calls: Int
        do {
            let store = try RecordStore(path: Self.path, model: versions.v1, options: RecordsCrashTest.options(before))
            for transaction in 0..<Self.transactions {
                try store.write { try RecordsWorkload.step($0, seed: workloadSeed, transaction: transaction) }
            }
            try store.close()
            old = try Self.checkedDigest(before, versions.v1)
            let reference = before.clone()
            let start = reference.mutationCount
            migrated = try Self.checkedDigest(reference, versions.v3, .plan(versions.plan))
            calls = reference.mutationCount - start
        } catch {
            return (.corrupt("the uncrashed migration failed: \(error)"), "reference")
        }
        var rng = SplitMix64(seed: crashSeed)
        let stopAt = rng.below(calls + 1)
        let fs = before.clone()
        fs.crashAfter(operations: stopAt)
        var acknowledged = false
        do {
            let store = try RecordStore(path: Self.path, model: versions.v3, options: RecordsCrashTest.options(fs),
                                        migration: .plan(versions.plan))
            acknowledged = true  // full durability: the migration's commit is durable
            try store.close()
        } catch {
            if !fs.hasCrashed { return (.corrupt("the migration failed before its crash point: \(error)"), "") }
        }
        let summary = fs.crash(seed: crashSeed)
        let label = "crashAfter(\(stopAt)) of \(calls) calls, crash \(summary)"
        do {
            var state = 1
            do {
                let content = try Self.checkedDigest(fs, versions.v1)
                guard !acknowledged else { return (.lost("the migration returned, the old store came back"), label) }
                guard content == old else { return (.corrupt("the old store's rows changed"), label) }
                state = 0
            } catch StrataError.unsupportedModelVersion(let found, _) where found == 3 {
                guard try Self.checkedDigest(fs, versions.v3) == migrated else {
                    return (.corrupt("the migrated store's rows are not the migration's"), label)
                }
            }
            // Either way, the program with the plan ends with the migrated store.
            guard try Self.checkedDigest(fs, versions.v3, .plan(versions.plan)) == migrated else {
                return (.corrupt("migrating after recovery gave other rows"), label)
            }
            return (.ok(state: state), label)
        } catch {
            return (CrashVerdict.from(error, "recovery"), label)
        }
    }
}
