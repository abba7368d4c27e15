import ArgumentParser
import StrataStorage

/// `strata compact FILE`: rewrites the store with only live data and atomically replaces the
/// file (bbolt's `compact`, but in place). Needs the write lock, so it refuses while an
/// application has the store open for writing.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Reclaim a store's dead space by rewriting it (needs the write lock).",
        discussion: """
            Fails with "store is locked for writing" while another process has the store open \
            for writing: stop it, or let it call Store.compact() itself.
            """)

    @Argument(help: "The store file.")
    var file: String

    func run() throws {
        let store: Store
        do {
            store = try openStore(file, readOnly: false)
        } catch StrataError.locked(let path) {
            // Name the process that holds the lock, when its status record says.
            var who = ""
            if case .lockedExclusively(let pid?) = PosixFileSystem().lockState(path) {
                who = " (pid \(pid))"
            } else if let status = StoreStatus.read(storePath: file), status.isOpen, processExists(status.pid) {
                who = " (pid \(status.pid))"
            }
            throw ToolError("cannot compact \(file): it is open for writing in another process\(who); "
                            + "lock file \(path)")
        }
        let report: Store.CopyReport
        do {
            report = try store.compact()
        } catch {
            try? store.close()
            throw error
        }
        // Close releases the lock and syncs; its failure is the command's failure.
        try store.close()
        let saved = report.bytesBefore > report.bytesAfter ? report.bytesBefore - report.bytesAfter : 0
        print("before: \(formatBytes(report.bytesBefore))")
        print("after:  \(formatBytes(report.bytesAfter))")
        print("saved:  \(formatBytes(saved))")
        print("entries: \(report.entries), as of transaction \(report.transactionID)")
    }
}
