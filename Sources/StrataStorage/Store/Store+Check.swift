/// The structural check (`strata check`), whose findings are a ``CheckReport``.
extension Store {
    /// Checks the whole store as of the latest commit. Holds the writer gate while it runs, so
    /// the log does not move underneath it.
    public func check() throws -> CheckReport {
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        if isReadOnly { return try checkVersion(currentVersion, logEnd: logEndAtOpen, recordedLive: nil) }
        gate.lock()
        defer { gate.unlock() }
        return try checkLocked()
    }

    func checkLocked() throws -> CheckReport {
        try checkVersion(currentVersion, logEnd: writableLog().end, recordedLive: liveBytes)
    }

    private func checkVersion(_ version: Version, logEnd: UInt64, recordedLive: UInt64?) throws -> CheckReport {
        var report = CheckReport()
        let file = version.file
        // The log as recovery (or the writer) knows it: a torn tail or another process's
        // in-flight appends beyond it are not part of the store.
        let end = logEnd
        report.fileBytes = end
        let reader = FrameReader(file: file.file)

        // 1. Every frame from the start of the log: header and payload checksums.
        var offset = Format.logStart
        var sawCheckpoint = false
        while offset < end {
            guard let frameHeader = try reader.header(at: offset, limit: end) else {
                // Zeros after the log (preallocation) are not a problem; anything else is.
                if try !isZero(file.file, from: offset, to: end) {
                    report.problems.append("invalid frame header at \(offset)")
                }
                break
            }
            if try reader.payload(of: frameHeader, at: offset) == nil {
                report.problems.append("frame at \(offset) (\(frameHeader.type)): payload checksum mismatch")
            }
            report.frames += 1
            if frameHeader.type == .checkpoint && offset == checkpointFrame.offset { sawCheckpoint = true }
            offset += frameHeader.frameLength
        }

        // 2. The trees.
        var seenFrames = Set<UInt64>()
        var seenPages = Set<ObjectIdentifier>()
        var reachableBytes: UInt64 = 0
        for (name, tree) in version.trees.sorted(by: { $0.key < $1.key }) {
            func problem(_ what: String) { report.problems.append("tree '\(name)': " + what) }
            guard let root = tree.root else {
                if tree.count != 0 { problem("empty but its count is \(tree.count)") }
                continue
            }
            var entries: UInt64 = 0
            var leafLevels = Set<Int>()
            func visit(_ page: Page, lower: [UInt8]?, upper: [UInt8]?, depth: Int) throws {
                report.pagesVisited += 1
                if page.diskAddress != 0 {
                    if !seenFrames.insert(page.diskAddress).inserted {
                        problem("page frame \(page.diskAddress) reachable twice")
                        return
                    }
                    // Frames after the checkpoint are counted with the log after it (a checkpoint
                    // whose header write failed leaves its pages there). A leaf delta reaches its
                    // base, which no other page may reach (FORMAT.md §4, "Leaf deltas").
                    let base = page.deltaBase
                    let ownLength = page.diskLength - base.length
                    if page.diskAddress < checkpointFrame.offset { reachableBytes += ownLength }
                    if base.offset != 0 {
                        if !seenFrames.insert(base.offset).inserted {
                            problem("page frame \(base.offset) reachable twice (the base of the leaf delta at \(page.diskAddress))")
                        } else if base.offset < checkpointFrame.offset {
                            reachableBytes += base.length
                        }
                    }
                } else if !seenPages.insert(ObjectIdentifier(page)).inserted {
                    problem("in-memory page reachable twice")
                    return
                }
                if page.count == 0 && (page.level > 0 || page !== root) {
                    problem("empty page at level \(page.level)")
                }
                var previous: [UInt8]?
                for i in 0..<page.count {
                    let key = [UInt8](page.key(i))
                    if !(page.level > 0 && i == 0) {
                        if let previous, compareBytes(previous, key) >= 0 {
                            problem("keys out of order in page at level \(page.level)")
                        }
                        if let lower, compareBytes(key, lower) < 0 { problem("key below its parent's bound") }
                        if let upper, compareBytes(key, upper) >= 0 { problem("key at or above its parent's bound") }
                        previous = key
                    }
                    if page.isLeaf {
                        entries += 1
                        let (length, overflow) = page.valueInfo(i)
                        if overflow {
                            let at = page.overflowAddress(i)
                            do {
                                _ = try file.overflowValue(at: at, length: length)
                                if let frameHeader = try reader.header(at: at, limit: end),
                                   seenFrames.insert(at).inserted, at < checkpointFrame.offset {
                                    reachableBytes += frameHeader.frameLength
                                }
                            } catch let error as StrataError {
                                guard case .corrupt = error else { throw error }
                                problem("overflow value at \(at): \(error)")
                            }
                        }
                    }
                }
                if page.isLeaf {
                    leafLevels.insert(depth)
                    return
                }
                for i in 0..<page.count {
                    let child: Page
                    do { child = try TreeRead.child(page, i, file) } catch let error as StrataError {
                        // Damage is a finding; an I/O error is not, and is thrown.
                        guard case .corrupt = error else { throw error }
                        problem("child \(i) at level \(page.level): \(error)")
                        continue
                    }
                    if child.level != page.level - 1 { problem("child level \(child.level) under level \(page.level)") }
                    let childLower: [UInt8]? = i == 0 ? lower : [UInt8](page.key(i))
                    let childUpper: [UInt8]? = i + 1 < page.count ? [UInt8](page.key(i + 1)) : upper
                    try visit(child, lower: childLower, upper: childUpper, depth: depth + 1)
                }
            }
            try visit(root, lower: nil, upper: nil, depth: 0)
            if leafLevels.count > 1 { problem("leaves at different depths \(leafLevels.sorted())") }
            if entries != tree.count { problem("\(entries) entries, catalog says \(tree.count)") }
            report.entries += entries
        }

        // 3. Space: header region + reachable frames + the checkpoint the store started from +
        // the log after it (commits not yet checkpointed, and frames of an unfinished one).
        let checkpointEnd = checkpointFrame.offset + checkpointFrame.length
        let logAfterCheckpoint = end > checkpointEnd ? end - checkpointEnd : 0
        report.liveBytes = Format.logStart + reachableBytes + checkpointFrame.length + logAfterCheckpoint
        if !sawCheckpoint {
            report.problems.append("the checkpoint frame at \(checkpointFrame.offset) is not in the log")
        }
        if let recordedLive, logAfterCheckpoint == 0, recordedLive != report.liveBytes {
            let found = report.liveBytes
            report.problems.append("space accounting says \(recordedLive) live bytes, the walk finds \(found)")
        }
        return report
    }

    private func isZero(_ file: any StorageFile, from: UInt64, to: UInt64) throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var at = from
        while at < to {
            let n = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: at) }
            if n == 0 { break }
            if buffer[..<n].contains(where: { $0 != 0 }) { return false }
            at += UInt64(n)
        }
        return true
    }
}
