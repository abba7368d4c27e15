import ArgumentParser
import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata backup FILE DEST`: writes a compact, consistent copy of the latest commit to DEST
/// (SQLite's backup API, bbolt's `Tx.CopyFile`). Opens the source read-only, so it runs while
/// an application writes.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a store's latest commit to a new, compact store file.",
        discussion: """
            The copy holds every transaction written to FILE when the backup starts. An \
            existing DEST is only replaced with --force: swapped arguments would otherwise \
            overwrite a live store with an old copy.
            """)

    @Argument(help: "The store file to copy.")
    var file: String

    @Argument(help: "Where to write the copy.")
    var destination: String

    @Flag(help: "Replace DEST if it exists.")
    var force = false

    func run() throws {
        if sameFile(file, destination) {
            throw ToolError("destination \(destination) is the store itself")
        }
        if access(destination, F_OK) == 0 && !force {
            throw ToolError("\(destination) exists (use --force to replace it)")
        }
        let store = try openStore(file, readOnly: true)
        defer { try? store.close() }
        let report = try store.backup(to: destination)
        print("copied transaction \(report.transactionID): \(report.entries) entries, "
              + "\(formatBytes(report.bytesAfter)) to \(destination)")
    }
}

/// Whether two paths name the same file (same device and inode), however they are spelled.
private func sameFile(_ first: String, _ second: String) -> Bool {
    var firstStatus = stat()
    var secondStatus = stat()
    guard stat(first, &firstStatus) == 0, stat(second, &secondStatus) == 0 else { return false }
    return firstStatus.st_dev == secondStatus.st_dev && firstStatus.st_ino == secondStatus.st_ino
}
