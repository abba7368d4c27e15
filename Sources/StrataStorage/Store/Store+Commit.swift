/// The commit: running a write transaction's closure, appending its commit frame, publishing
/// the new version, and what follows a commit (the status record, an automatic checkpoint, the
/// strict check) (FORMAT.md, "Writing").
extension Store {
    /// Requires the writer's section (``lockWriter()``); releases it.
    func runWrite<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        var holding = true
        defer { if holding { unlockWriter() } }
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        let log = try writableLog()
        try log.checkUsable()
        let tx = WriteTransaction(base: currentVersion, log: log)
        // A commit releases the cache budget its copies held (reserving its dirty pages);
        // every other ending releases it here.
        defer { tx.base.file.cache.endInFlight() }
        let result: T
        do {
            result = try body(tx)
        } catch {
            tx.lifetime.end(.rolledBack)
            throw error
        }
        switch tx.lifetime.state {
        case .active: break
        case .failed:
            // The closure caught the failure and returned: the transaction cannot commit.
            let cause = tx.lifetime.cause
            tx.lifetime.end(.rolledBack)
            throw StrataError.transactionFailed(cause: cause ?? .transactionEnded(.rolledBack))
        default:
            // Rolled back by the closure.
            return result
        }
        let committed: Committed
        do {
            committed = try commit(tx)
        } catch {
            tx.lifetime.end(.rolledBack)
            throw error
        }
        tx.lifetime.end(.committed)
        // A compaction may replace the log once the gate opens: wait on this one.
        let (syncRef, fileRef) = (sync, try writableLog().file)
        unlockWriter()
        holding = false
        if let target = committed.durableTarget { try syncRef.waitDurable(upTo: target, file: fileRef) }
        if let problems = committed.strictCheckProblems {
            throw StrataError.strictCheckFailed(transactionID: tx.transactionID, problems: problems)
        }
        return result
    }

    struct Committed {
        /// The log offset that must be durable before the commit is acknowledged (`full`).
        var durableTarget: UInt64?
        /// What the strict check found (``StoreOptions/strictChecks``), `nil` if clean or off.
        var strictCheckProblems: [String]?
    }

    /// Appends the commit frame and publishes the new version. Nothing is published if it
    /// throws; once the frame is written nothing after it throws (the commit stands).
    private func commit(_ tx: WriteTransaction) throws -> Committed {
        if tx.record.isEmpty {
            // Nothing changed (every change, overflow puts included, is in the record).
            return Committed(durableTarget: nil, strictCheckProblems: nil)
        }
        var trees = tx.base.trees
        for name in tx.droppedNames { trees[name] = nil }
        var touched = 0
        var dirtied = 0
        var freed: UInt64 = 0
        var freedOverflow: [UInt64] = []
        for tree in tx.droppedTrees {
            freed += tree.freedFrameBytes
            freedOverflow += tree.freedOverflow
        }
        for (name, tree) in tx.trees {
            trees[name] = Version.Tree(id: tree.id, name: name, root: tree.root, count: tree.count)
            touched += tree.pagesTouched
            dirtied += tree.pagesDirtied
            replacedBytesSinceCheckpoint += tree.replacedFrameBytes
            freed += tree.freedFrameBytes
            freedOverflow += tree.freedOverflow
        }
        // Read before the frame is written: a failed read fails the commit while nothing is
        // written yet (a swallowed one left the freed frame counted live for good).
        for offset in freedOverflow { freed += try overflowFrameLength(offset) }
        let frame = try tx.record.bytes.withUnsafeBytes {
            try tx.log.append(.commit, txid: tx.transactionID, payload: $0, compress: $0.count >= 512)
        }
        liveDelta += Int64(tx.overflowFramesWritten.reduce(0) { $0 + $1.length }) - Int64(freed)
        commitBytesSinceCheckpoint += frame.length
        dirtyBytesSinceCheckpoint += UInt64(dirtied * currentVersion.file.pageSize)
        counterState.withLock {
            $0.commits += 1
            $0.pagesTouchedByLastCommit = touched
        }
        let version = Version(txid: tx.transactionID, trees: trees, nextTreeID: tx.nextTreeID,
                              file: tx.base.file, deadBytesAtCommit: deadBytes)
        publish(version)
        let now = ContinuousClock.now
        if lastStatusWrite.map({ now - $0 >= .milliseconds(100) }) ?? true {
            lastStatusWrite = now
            writeStatus()
        }
        checkpointAfterCommitIfDue(pagesDirtied: dirtied)
        reserveCacheForDirtyPages()
        var problems: [String]?
        if options.strictChecks {
            do {
                let report = try checkLocked()
                if !report.isClean { problems = report.problems }
            } catch {
                problems = ["the check could not run: \(error)"]
            }
        }
        return Committed(durableTarget: options.durability == .full ? tx.log.end : nil, strictCheckProblems: problems)
    }

    /// The automatic checkpoint, by log size or the volume of pages made dirty, spread over
    /// commits: once one is due, each commit writes some of the dirty pages (twice as many as
    /// it dirtied, at least ``StoreOptions/checkpointStepPages``), children before parents, and the commit
    /// that leaves none dirty writes the checkpoint frame and syncs. So no commit waits for a
    /// whole checkpoint, and the dirty set shrinks by at least the floor with each commit. A
    /// checkpoint still unfinished when the log reaches twice its trigger finishes at once
    /// (recovery time stays bounded).
    ///
    /// A failure does not undo the commit that ran it (the commit is in the log, and recovery
    /// replays it); it is counted in ``Statistics/checkpointFailures``, kept in
    /// ``Statistics/lastCheckpointError``, and retried by later commits, each failure in a row
    /// doubling the commits to wait (up to 1,024), and by ``close()``, which throws if it still
    /// fails. A failed sync poisons the store, and the commit's durability wait reports that.
    private func checkpointAfterCommitIfDue(pagesDirtied: Int) {
        if !checkpointInProgress {
            guard commitBytesSinceCheckpoint >= UInt64(options.checkpointLogBytes)
                || dirtyBytesSinceCheckpoint >= dirtyBytesTrigger else { return }
        }
        if checkpointRetryCountdown > 0 {
            checkpointRetryCountdown -= 1
            return
        }
        checkpointInProgress = true
        let overdue = commitBytesSinceCheckpoint >= 2 * UInt64(options.checkpointLogBytes)
        do {
            try writableLog().checkUsable()
            if try writeDirtyPages(budget: overdue ? nil : max(1, options.checkpointStepPages, 2 * pagesDirtied)) {
                try finishCheckpoint()
            }
            consecutiveCheckpointFailures = 0
        } catch {
            let failure = error as? StrataError ?? .invalidArgument("\(error)")
            consecutiveCheckpointFailures += 1
            checkpointRetryCountdown = (1 << min(consecutiveCheckpointFailures, 10)) - 1
            counterState.withLock {
                $0.checkpointFailures += 1
                $0.lastCheckpointError = failure
            }
        }
    }

    /// Dirty pages share the cache's budget: a checkpoint starts when they reach half of it
    /// (or ``StoreOptions/checkpointDirtyBytes``, if lower), and the cache gives up what they
    /// take. Pages a spread checkpoint has written stay counted until it finishes: the
    /// in-memory trees hold them until then.
    var dirtyBytesTrigger: UInt64 {
        UInt64(max(min(options.checkpointDirtyBytes, options.cacheBytes / 2), 0))
    }

    func reserveCacheForDirtyPages() {
        let dirty = Int(clamping: dirtyBytesSinceCheckpoint)
        // Also releases what the transaction's copies held while it ran.
        currentVersion.file.cache.reserve(dirty)
    }

    func publish(_ version: Version) {
        shared.withLock {
            $0.current = version
            publishedTransactionID.store(version.txid, ordering: .releasing)
        }
    }

    /// The length of the overflow frame at `offset`, which a committed tree referenced. An I/O
    /// error is thrown; a damaged header counts 0 (so a damaged value can still be deleted; the
    /// check then reports the space it cannot account for).
    private func overflowFrameLength(_ offset: UInt64) throws -> UInt64 {
        let log = try writableLog()
        guard let frameHeader = try FrameReader(file: log.file).header(at: offset, limit: log.end),
              frameHeader.type == .overflow else { return 0 }
        return frameHeader.frameLength
    }
}
