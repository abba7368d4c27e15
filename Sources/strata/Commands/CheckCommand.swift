import ArgumentParser
import StrataStorage

/// `strata check FILE`: verifies every frame's checksums and every tree's structure (bbolt's
/// `check`). Exit code 0 when the store is sound, 1 otherwise, so scripts can branch on it.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Verify a store's checksums, tree structure and space accounting.",
        discussion: """
            Opens the store read-only (no lock: it can run beside a writer) and checks the \
            latest commit. Exits 0 when clean; 1 with the list of problems, or when the file \
            cannot be opened at all.
            """)

    @Argument(help: "The store file.")
    var file: String

    func run() throws {
        // A file that does not even open is a different finding from a store with problems:
        // say which, since the first is often a wrong path or permissions.
        let store: Store
        do {
            store = try openStore(file, readOnly: true)
        } catch {
            throw ToolError("cannot open \(file): \(describe(error))")
        }
        defer { try? store.close() }
        let report: CheckReport
        do {
            report = try store.check()
        } catch {
            // The walk itself stopped on something it could not read past.
            throw ToolError("check of \(file) failed: \(describe(error))")
        }
        print("frames: \(report.frames), pages visited: \(report.pagesVisited), entries: \(report.entries)")
        var dead = formatBytes(report.deadBytes)
        // The check counts to the end of the file; beside a live writer that includes its
        // preallocated zeros, which are not garbage: say how much of "dead" they are.
        if let info = try? store.info(), info.fileBytes > info.logBytes, report.fileBytes == info.fileBytes {
            dead += ", of which \(humanBytes(info.fileBytes - info.logBytes)) is preallocated space after the log"
        }
        print("file: \(formatBytes(report.fileBytes)), live: \(formatBytes(report.liveBytes)), dead: \(dead)")
        var problems = report.problems
        if report.isClean {
            // The record layer: indexes, inverses, joins, and every derived value recomputed.
            do {
                if let records = try RecordsReport.open(store) {
                    let found = try records.read { try $0.checkRecords() }
                    let verdict = found.isEmpty ? "indexes and derived values verified" : "\(found.count) problems"
                    print("records: \(records.model.entities.count) entities, \(verdict)")
                    // The schema text's one ambiguity (FORMAT.md §12): the rules rebuilt here differ
                    // from the program's, which nothing checked depends on. Worth knowing, no damage.
                    for note in records.model.schemaLinesReadDifferently {
                        print("note: the stored model reads back otherwise here (validation rules only): \(note)")
                    }
                    problems += found
                }
            } catch {
                problems.append("record layer: \(describe(error))")
            }
        }
        if problems.isEmpty {
            print("OK")
            return
        }
        // (Beside a live writer the check reads the log only as far as the open found it, so a
        // frame being written is never one of the problems.)
        for problem in problems { print("problem: \(problem)") }
        printError("strata: \(file): \(problems.count) problem\(problems.count == 1 ? "" : "s") found")
        throw ExitCode(1)
    }
}
