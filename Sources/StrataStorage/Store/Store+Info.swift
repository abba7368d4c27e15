#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata info`: the figures of ``StoreInfo``, and the status record of ``StoreStatus`` this
/// process writes.
extension Store {
    /// A description of the store now: header, space, trees, and the oldest open snapshot.
    ///
    /// On a writable handle it waits for the writer gate (like ``check()``), so do not call it
    /// inside a write transaction. On a read-only handle it also reads the writing process's
    /// status record from the lock file (``StoreInfo/writerStatus``).
    public func info() throws -> StoreInfo {
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        if isReadOnly {
            // Nothing of the writer state changes after a read-only open: no gate needed.
            var info = try infoLocked()
            info.writerStatus = StoreStatus.read(storePath: path, fileSystem: fs)
            info.writeLock = fs.lockState(Store.lockPath(for: path))
            return info
        }
        gate.lock()
        defer { gate.unlock() }
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        return try infoLocked()
    }

    /// Requires the writer gate (or a read-only handle).
    func infoLocked() throws -> StoreInfo {
        let version = currentVersion
        let logBytes: UInt64
        let fileBytes: UInt64
        if let log {
            logBytes = log.end
            fileBytes = log.allocatedEnd
        } else {
            // A read-only handle has no log: recovery's valid end is where the log ends, and
            // what follows it on disk is a live writer's preallocation (or a torn tail).
            fileBytes = try version.file.file.size()
            logBytes = min(sync.durableEnd, fileBytes)
        }
        let live = liveBytes
        let dead = logBytes > live ? logBytes - live : 0
        let (count, oldest) = oldestReader()
        return StoreInfo(
            path: path, isReadOnly: isReadOnly, formatVersion: header.formatVersion, pageSize: version.file.pageSize,
            fileID: header.fileID, headerSequence: header.sequence, fileBytes: fileBytes, logBytes: logBytes,
            liveBytes: min(live, logBytes), deadBytes: dead, transactionID: version.txid,
            checkpointTransactionID: header.checkpointTxid, checkpointOffset: header.checkpointOffset,
            trees: version.trees.values.sorted { $0.name < $1.name }.map {
                StoreInfo.Tree(name: $0.name, entries: $0.count, height: $0.root.map { $0.level + 1 } ?? 0)
            },
            openSnapshots: count,
            oldestSnapshot: oldest.map {
                // A compaction resets the dead count below what the snapshot saw; clamp at 0.
                StoreInfo.Snapshot(transactionID: $0.txid, age: .now - $0.startedAt,
                                   heldBackBytes: dead > $0.deadBytesAtCommit ? dead - $0.deadBytesAtCommit : 0)
            },
            writerStatus: nil, writeLock: isReadOnly ? .unknown : .lockedExclusively(pid: getpid()))
    }

    private func oldestReader() -> (Int, ReaderInfo?) {
        shared.withLock { state in
            let oldest = state.readers.values.min {
                ($0.txid, $0.startedAt) < ($1.txid, $1.startedAt)
            }
            return (state.readers.count, oldest)
        }
    }

    /// Writes this process's status record (``StoreStatus``) into the lock file, replacing the
    /// previous one, so `strata info` in another process can show the oldest snapshot and the
    /// garbage it holds back. No `fsync`: the record is advisory and a crash makes it stale
    /// anyway (readers check whether `pid` still runs). Errors are ignored for the same reason:
    /// a diagnostic must never fail a commit.
    ///
    /// Requires the writer gate. Pass `closing: true` from ``close()``, so the record says the
    /// store is no longer open for writing although the process may live on. A no-op on a
    /// read-only handle, which must write nothing.
    func writeStatus(closing: Bool = false) {
        // After close the record must keep saying "closed": a late call is a no-op.
        // A shared store has several writers: no one record describes them.
        guard !isReadOnly, options.sharing == .exclusive, closing || !shared.withLock({ $0.isClosed }),
              let info = try? infoLocked() else { return }
        let oldest = closing ? nil : info.oldestSnapshot
        let status = StoreStatus(
            pid: getpid(), isOpen: !closing, transactionID: info.transactionID,
            readers: closing ? 0 : info.openSnapshots, oldestSnapshotTransactionID: oldest?.transactionID,
            oldestSnapshotAgeMilliseconds: oldest.map { milliseconds($0.age) },
            heldBackBytes: oldest?.heldBackBytes ?? 0, deadBytes: info.deadBytes, logBytes: info.logBytes,
            updatedMilliseconds: StoreStatus.nowMilliseconds())
        let bytes = Array(status.line.utf8)
        guard let file = try? fs.open(Store.lockPath(for: path), mode: .create) else { return }
        defer { file.close() }
        // Write first, then cut: a concurrent reader sees either the old line, the new line
        // followed by the old one's tail (ignored after the newline), or a torn line the CRC rejects.
        guard (try? file.write(bytes, at: 0)) != nil else { return }
        try? file.truncate(to: UInt64(bytes.count))
    }
}

/// A non-negative duration in whole milliseconds.
private func milliseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    return seconds < 0 ? 0 : UInt64(seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000)
}
