import StrataStorage

extension RecordReader {
    /// Whether commits to the store record persistent history (``HistoryRecording``).
    public func isRecordingHistory() throws -> Bool {
        try checkOpen()
        return try HistoryState.read(source).isOn
    }

    /// The token of the newest recorded transaction this reader sees, or ``HistoryToken/start``
    /// when none was recorded: what a consumer that has just read the data saves, to ask later
    /// for what came after it.
    public func lastHistoryToken() throws -> HistoryToken {
        try checkOpen()
        return HistoryToken(try HistoryState.read(source).last)
    }

    /// The earliest token ``history(after:limit:)`` accepts: every transaction up to it is gone
    /// (purged, or never recorded), so the history after it is all the store keeps. Reads two
    /// meta keys, unlike ``historySummary()``, which walks the history.
    public func earliestHistoryToken() throws -> HistoryToken {
        try checkOpen()
        return HistoryToken(try HistoryState.read(source).purgedThrough)
    }

    /// The recorded transactions after `token`, oldest first, at most `limit` of them (ask again
    /// after the last one for more).
    ///
    /// Throws `StrataError.historyPurged(after:purgedThrough:)` when transactions after
    /// `token` are gone (purged, or committed while the store recorded no history): the caller
    /// missed changes and must read the data afresh. A token newer than the newest recorded
    /// (from another store, or a store restored from an older backup) is
    /// `StrataError.invalidArgument`; a damaged entry is `corrupt`.
    public func history(after token: HistoryToken = .start, limit: Int = .max) throws -> [HistoryTransaction] {
        try checkOpen()
        guard limit > 0 else { return [] }
        let state = try HistoryState.read(source)
        guard token.value >= state.purgedThrough else {
            throw StrataError.historyPurged(after: token.value, purgedThrough: state.purgedThrough)
        }
        guard token.value <= state.last else {
            throw StrataError.invalidArgument(
                "history token \(token) is after the store's newest, \(state.last): a token of another store?")
        }
        guard token.value < state.last, let cursor = try source.cursor(RecordTrees.history) else { return [] }
        var found: [HistoryTransaction] = []
        var expected = token.value + 1
        var positioned = try cursor.seek(KeyEncoding.primaryKey(token.value + 1))
        while positioned, found.count < limit {
            let key = try RecordTrees.primaryKey(cursor.key, at: 0, exactLength: 8, tree: RecordTrees.history)
            guard key <= state.last else {
                throw StrataError.corrupt("\(RecordTrees.history) holds token \(key), after the newest, \(state.last)",
                                          offset: nil)
            }
            // Tokens of transactions that changed nothing a consumer sees are never given, so
            // the tokens run without gaps (FORMAT.md): a gap is an entry lost.
            guard key == expected else {
                throw StrataError.corrupt("\(RecordTrees.history) lacks token \(expected) (the next is \(key))",
                                          offset: nil)
            }
            found.append(try HistoryCodec.decode(cursor.value, token: key))
            expected += 1
            positioned = try cursor.next()
        }
        if found.count < limit, expected <= state.last {
            throw StrataError.corrupt("\(RecordTrees.history) ends at token \(expected - 1), before the newest, "
                                      + "\(state.last)", offset: nil)
        }
        return found
    }
}

extension RecordReader {
    /// What the store's persistent history holds, for operators (`strata info`): one pass over
    /// its keys and value sizes, no entry decoded.
    public func historySummary() throws -> HistorySummary {
        try checkOpen()
        let state = try HistoryState.read(source)
        var summary = HistorySummary(isRecording: state.isOn, transactionCount: 0, bytes: 0, oldest: nil,
                                     newest: HistoryToken(state.last), purgedThrough: HistoryToken(state.purgedThrough))
        try source.scan(RecordTrees.history, prefix: []) { key, cursor in
            summary.transactionCount += 1
            summary.bytes += UInt64(key.count + cursor.value.count)
            if summary.oldest == nil, key.count == 8 {
                summary.oldest = HistoryToken(key.loadBigEndianUInt64())
            }
            return true
        }
        return summary
    }
}
