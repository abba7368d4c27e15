import StrataStorage

/// What `records:meta` says of the persistent history (FORMAT.md §12, "History"): whether the
/// store records it, the next token, and how far it was purged.
struct HistoryState {
    /// Whether commits record history.
    var isOn: Bool
    /// The token the next recorded transaction gets (1 in a store that never recorded).
    var next: UInt64
    /// Every token up to this one is gone, purged or never recorded (0: none).
    var purgedThrough: UInt64

    /// The newest token given (0: none yet).
    var last: UInt64 { next - 1 }

    /// Reads the state through `source`. Throws `corrupt` for values that cannot be: a token of
    /// another length than 8 bytes, a next token of 0, a purge mark past the newest token.
    static func read(_ source: TreeSource) throws -> HistoryState {
        let isOn = try source.get(RecordTrees.meta, RecordTrees.historyOnKey) != nil
        let next = try source.get(RecordTrees.meta, RecordTrees.historyNextKey).map { try token($0, "history:next") } ?? 1
        let purged = try source.get(RecordTrees.meta, RecordTrees.historyPurgedKey)
            .map { try token($0, "history:purged") } ?? 0
        // No store gives 2^64 − 1 tokens: a next token there is damage, and refusing it keeps
        // every token arithmetic below (next + 1, last + 1) from overflowing.
        guard next >= 1, next < UInt64.max, purged < next else {
            throw StrataError.corrupt("records:meta: history:next is \(next) and history:purged \(purged)", offset: nil)
        }
        return HistoryState(isOn: isOn, next: next, purgedThrough: purged)
    }

    /// The token the next recorded transaction gets, read from the meta tree being written.
    static func nextToken(_ meta: WriteTree) throws -> UInt64 {
        guard let stored = try meta.get(RecordTrees.historyNextKey) else { return 1 }
        let next = try token(stored, "history:next")
        guard next >= 1, next < UInt64.max else {
            throw StrataError.corrupt("records:meta: history:next is \(next)", offset: nil)
        }
        return next
    }

    /// A token stored as 8 bytes big-endian, or `corrupt` naming the meta key.
    static func token(_ bytes: [UInt8], _ key: String) throws -> UInt64 {
        guard bytes.count == 8 else {
            throw StrataError.corrupt("records:meta: \(key) is \(bytes.count) bytes, not 8", offset: nil)
        }
        return KeyEncoding.decodePrimaryKey(bytes)
    }
}
