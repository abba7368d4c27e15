import StrataStorage

extension RecordCheck {
    /// The persistent history against `records:meta`: the recording flag is one byte 1, every
    /// token after the purge mark up to the newest is there (tokens run without gaps), none at
    /// or below the mark, and every entry decodes whole.
    func checkHistory() throws {
        if let flag = try source.get(RecordTrees.meta, RecordTrees.historyOnKey), flag != [1] {
            report("\(RecordTrees.meta): the history flag is \(flag), expected [1]")
        }
        let state: HistoryState
        do {
            state = try HistoryState.read(source)
        } catch let error as StrataError {
            report("\(error)")
            return
        }
        var expected = state.purgedThrough + 1
        var reported = false
        try source.scan(RecordTrees.history, prefix: []) { key, cursor in
            guard key.count == 8 else {
                report("\(RecordTrees.history) holds a key of \(key.count) bytes, not 8")
                return true
            }
            let token = key.loadBigEndianUInt64()
            // Tokens come from the file: any of 2^64 values. `state.last` is below UInt64.max
            // (HistoryState), so a token past it is reported before any arithmetic on it.
            if token > state.last {
                report("\(RecordTrees.history) holds token \(token), after the newest, \(state.last)")
                return true
            }
            if token != expected, !reported {
                report(token < expected
                       ? "\(RecordTrees.history) holds token \(token), at or below the purge mark \(state.purgedThrough)"
                       : "\(RecordTrees.history) lacks tokens \(expected)...\(token - 1)")
                reported = true
            }
            do {
                try HistoryCodec.validate(cursor.value, token: token)
            } catch let error as StrataError {
                report("\(error)")
            }
            expected = max(expected, token + 1)
            return true
        }
        if expected <= state.last {
            report("\(RecordTrees.history) ends at token \(expected - 1), before the newest, \(state.last)")
        }
    }
}
