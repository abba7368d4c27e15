import ArgumentParser
import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata info FILE [--json] [--replication URL [--name N]]`: the header, space use, the trees,
/// and, from the writing process's status record in the lock file, its oldest open snapshot and
/// the garbage that snapshot holds back (the usual cause of a file that keeps growing); with
/// `--replication`, where the store's replication to PostgreSQL stands.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a store's format, space use, trees and oldest open snapshot.",
        discussion: """
            Opens the store read-only and takes no lock, so it works on a live store. Whether \
            a process has the store open for writing comes from the write lock on FILE.lock \
            (read from /proc/locks, without taking it). The writer's snapshots come from the \
            status record it keeps in FILE.lock, which it rewrites at most every 100 ms on \
            commit, at checkpoints and on close: a snapshot opened since the writer's last \
            commit is not shown yet (it holds nothing back).
            """)

    @Argument(help: "The store file.")
    var file: String

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Option(help: ArgumentHelp("Also show where the store's replication to this PostgreSQL database stands: its replica number, the tokens pushed and held, the lag, the changes queued for it and the refusals.", valueName: "URL"))
    var replication: String?

    @Option(help: "The replication's name (with --replication).")
    var name = "default"

    func run() throws {
        let store = try openStore(file, readOnly: true)
        defer { try? store.close() }
        let info = try store.info()
        let writer = info.writerStatus.map { WriterView($0, now: wallClockMilliseconds()) }
        print(json ? jsonReport(info, writer).rendered() : textReport(info, writer))
        if !json, let records = try RecordsReport.open(store) {
            print(try RecordsReport.modelText(records), terminator: "")
            print(try RecordsReport.historyText(records), terminator: "")
            print(try RecordsReport.keyRangeText(records), terminator: "")
        }
        if let replication { try printReplication(replication) }
    }

    /// The replication's status, as `key: value` lines (or one JSON object).
    private func printReplication(_ url: String) throws {
        let records = try RecordStore(opening: try openStore(file, readOnly: true))
        let destination = try PostgresDestination(url: url)
        let replicator = PostgresReplicator(store: records, destination: destination, name: name)
        let found = Mutex<ReplicationStatus?>(nil)
        try waitFor {
            let status = try await replicator.status()
            found.withLock { $0 = status }
        }
        guard let status = found.withLock({ $0 }) else { return }
        let pushed = status.pushedToken.map { String($0.value) } ?? "none"
        if json {
            print("{\"replication\":\(JSON.quote(status.name)),\"replica\":\(status.replica.map(String.init) ?? "null"),"
                  + "\"pushedToken\":\(status.pushedToken.map { String($0.value) } ?? "null"),\"storeToken\":\(status.storeToken.value),"
                  + "\"unpushedTransactions\":\(status.unpushedTransactions),\"pushLagSeconds\":\(status.pushLagSeconds),"
                  + "\"queuedChanges\":\(status.queuedChanges),\"refusals\":\(status.refusals),"
                  + "\"otherStores\":[\(status.otherStores.map(JSON.quote).joined(separator: ","))]}")
            return
        }
        print("replication '\(status.name)' to \(destination): "
              + (status.replica.map { "replica \($0)" } ?? "not registered in a dataset")
              + (status.otherStores.isEmpty ? "" : ", beside \(status.otherStores.joined(separator: ", "))"))
        print("  pushed: token \(pushed) of \(status.storeToken.value) (\(status.unpushedTransactions) transaction"
              + "\(status.unpushedTransactions == 1 ? "" : "s") to push, lag \(String(format: "%.3f", status.pushLagSeconds)) s)")
        print("  to pull: \(status.queuedChanges) change\(status.queuedChanges == 1 ? "" : "s") queued; "
              + "refused rows in the dataset: \(status.refusals)")
    }

    /// The status record plus what only the reader can judge: whether the writer still runs
    /// and how old the record is.
    struct WriterView {
        let status: StoreStatus
        /// The recorded process still exists (a crashed writer leaves a stale record behind).
        let isRunning: Bool
        let statusAgeMilliseconds: UInt64

        init(_ status: StoreStatus, now: UInt64) {
            self.status = status
            isRunning = processExists(status.pid)
            statusAgeMilliseconds = now > status.updatedMilliseconds ? now - status.updatedMilliseconds : 0
        }

        /// The store is open for writing right now, so the snapshot figures are current
        /// (to within the status age).
        var isLive: Bool { status.isOpen && isRunning }

        /// The oldest snapshot's age now, if it is still open: its age in the record plus the
        /// record's age. An idle writer rewrites no record, so the recorded age alone would
        /// understate exactly the forgotten reader this is meant to expose.
        var estimatedSnapshotAgeMilliseconds: UInt64? {
            status.oldestSnapshotAgeMilliseconds.map { isLive ? $0 + statusAgeMilliseconds : $0 }
        }
    }

    private func textReport(_ info: StoreInfo, _ writer: WriterView?) -> String {
        var lines: [(String, String)] = []
        lines.append(("path", info.path))
        lines.append(("format version", "\(info.formatVersion)"))
        lines.append(("page size", "\(info.pageSize)"))
        var size = formatBytes(info.fileBytes)
        if info.fileBytes > info.logBytes {
            // A live writer grows the file in steps; the zeros are not garbage.
            size += ", \(humanBytes(info.fileBytes - info.logBytes)) of it preallocated"
        }
        lines.append(("file size", size))
        lines.append(("live", formatBytes(info.liveBytes)))
        lines.append(("dead", "\(formatBytes(info.deadBytes)), \(fixed(info.deadPercent, 1))% of the log"))
        lines.append(("last transaction", "\(info.transactionID)"))
        lines.append(("last checkpoint", "txid \(info.checkpointTransactionID) at offset \(info.checkpointOffset)"))
        var notes: [String] = []
        // The lock says whether a writer is there now; the record says what the last one did.
        var lockHolder: Int32?? = nil
        if case .lockedExclusively(let pid) = info.writeLock { lockHolder = .some(pid) }
        let recordIsCurrent = writer.map { view in
            view.isLive && (lockHolder.map { $0 == nil || $0 == view.status.pid } ?? true)
        } ?? false
        if let writer, recordIsCurrent {
            let status = writer.status
            let age = formatMilliseconds(writer.statusAgeMilliseconds)
            lines.append(("writer", "pid \(status.pid), at txid \(status.transactionID) (status from \(age) ago)"))
            lines.append(("open snapshots", "\(status.readers)"))
            if let txid = status.oldestSnapshotTransactionID, let open = writer.estimatedSnapshotAgeMilliseconds {
                var age = formatMilliseconds(open)
                if writer.statusAgeMilliseconds >= 1000 {
                    age += " (\(formatMilliseconds(status.oldestSnapshotAgeMilliseconds ?? 0)) "
                        + "when the status was written)"
                }
                lines.append(("oldest snapshot",
                              "txid \(txid), open \(age), holds back \(formatBytes(status.heldBackBytes)) of garbage"))
                if open >= 60_000 {
                    notes.append("note: a snapshot open this long is likely forgotten; "
                                 + "the garbage it holds back stays in memory or on disk until it ends")
                }
            } else {
                lines.append(("oldest snapshot", "none"))
            }
        } else if let holder = lockHolder {
            // A writer that has not committed yet has written no record (or only an older
            // writer's is there).
            let who = holder.map { "pid \($0)" } ?? "a process"
            lines.append(("writer", "\(who) has the store open for writing "
                          + "(it holds the write lock; it writes its status record at its first commit)"))
        } else if let writer {
            let status = writer.status
            let age = formatMilliseconds(writer.statusAgeMilliseconds)
            if !status.isOpen {
                lines.append(("writer", "none (pid \(status.pid) closed the store \(age) ago)"))
            } else if !writer.isRunning {
                lines.append(("writer", "none: pid \(status.pid) is not running "
                              + "(it did not close the store; status from \(age) ago)"))
            } else {
                lines.append(("writer", "none: pid \(status.pid) runs but holds no write lock "
                              + "(it dropped the store without closing it; status from \(age) ago)"))
            }
        } else {
            lines.append(("writer", "none (no process holds the write lock, and none has left a status record)"))
        }
        let width = lines.map(\.0.count).max()! + 2
        var out = lines.map { $0.0 + ":" + String(repeating: " ", count: width - $0.0.count - 1) + $0.1 }
        out.append("trees" + ":" + String(repeating: " ", count: width - 6) + "\(info.trees.count)")
        if !info.trees.isEmpty {
            let names = info.trees.map { escapeBytes($0.name.utf8) }
            let counts = info.trees.map { String($0.entries) }
            let nameWidth = max(4, names.map(\.count).max()!)
            let countWidth = max(7, counts.map(\.count).max()!)
            func row(_ name: String, _ entries: String, _ height: String) -> String {
                "  " + name + String(repeating: " ", count: nameWidth - name.count) + "  "
                    + String(repeating: " ", count: countWidth - entries.count) + entries + "  "
                    + String(repeating: " ", count: max(0, 6 - height.count)) + height
            }
            out.append(row("NAME", "ENTRIES", "HEIGHT"))
            for (i, tree) in info.trees.enumerated() { out.append(row(names[i], counts[i], "\(tree.height)")) }
        }
        return (out + notes).joined(separator: "\n")
    }

    /// `lock_held`: whether a process has the store open for writing now (`null`: cannot tell).
    private func writeLockJSON(_ state: FileLockState) -> [(String, JSON)] {
        switch state {
        case .unlocked: return [("lock_held", .bool(false)), ("pid", .null)]
        case .lockedExclusively(let pid):
            return [("lock_held", .bool(true)), ("pid", pid.map { .int(Int64($0)) } ?? .null)]
        case .unknown: return [("lock_held", .null), ("pid", .null)]
        }
    }

    private func jsonReport(_ info: StoreInfo, _ writer: WriterView?) -> JSON {
        func optional(_ value: UInt64?) -> JSON { value.map { .uint($0) } ?? .null }
        let writerJSON: JSON = writer.map { view in
            let status = view.status
            let oldest: JSON = status.oldestSnapshotTransactionID.map { txid in
                .object([
                    ("transaction_id", .uint(txid)),
                    ("age_ms", optional(status.oldestSnapshotAgeMilliseconds)),
                    ("estimated_age_ms_now", optional(view.estimatedSnapshotAgeMilliseconds)),
                    ("held_back_bytes", .uint(status.heldBackBytes)),
                ])
            } ?? .null
            return .object([
                ("pid", .int(Int64(status.pid))),
                ("open", .bool(status.isOpen)),
                ("running", .bool(view.isRunning)),
                ("status_age_ms", .uint(view.statusAgeMilliseconds)),
                ("updated_ms", .uint(status.updatedMilliseconds)),
                ("transaction_id", .uint(status.transactionID)),
                ("open_snapshots", .int(Int64(status.readers))),
                ("oldest_snapshot", oldest),
                ("dead_bytes", .uint(status.deadBytes)),
                ("log_bytes", .uint(status.logBytes)),
            ])
        } ?? .null
        return .object([
            ("path", .string(info.path)),
            ("format_version", .uint(UInt64(info.formatVersion))),
            ("page_size", .int(Int64(info.pageSize))),
            ("file_id", .uint(info.fileID)),
            ("file_bytes", .uint(info.fileBytes)),
            ("log_bytes", .uint(info.logBytes)),
            ("live_bytes", .uint(info.liveBytes)),
            ("dead_bytes", .uint(info.deadBytes)),
            ("dead_percent", .double(info.deadPercent)),
            ("transaction_id", .uint(info.transactionID)),
            ("checkpoint_transaction_id", .uint(info.checkpointTransactionID)),
            ("checkpoint_offset", .uint(info.checkpointOffset)),
            ("trees", .array(info.trees.map {
                .object([("name", .string($0.name)), ("entries", .uint($0.entries)),
                         ("height", .int(Int64($0.height)))])
            })),
            ("write_lock", .object(writeLockJSON(info.writeLock))),
            ("writer", writerJSON),
        ])
    }
}

/// Whether a process with this id exists. `kill(pid, 0)` sends nothing; EPERM means it exists
/// but belongs to another user. Ids ≤ 0 address process groups, never a single writer.
func processExists(_ pid: Int32) -> Bool {
    guard pid > 0 else { return false }
    return kill(pid, 0) == 0 || errno == EPERM
}

/// Wall-clock milliseconds since the Unix epoch, the clock the status record uses.
func wallClockMilliseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return UInt64(max(0, time.tv_sec)) * 1000 + UInt64(max(0, time.tv_nsec)) / 1_000_000
}
