import Foundation
import StrataStorage

extension RecordTransaction {
    /// Deletes the recorded transactions up to `token` (clamped to the newest), which no
    /// consumer needs any more, and returns how many it deleted. A consumer that later asks for
    /// the history after one of them gets `StrataError.historyPurged(after:purgedThrough:)`.
    @discardableResult
    public func purgeHistory(through token: HistoryToken) throws -> Int {
        try checkOpen()
        let state = try HistoryState.read(source)
        let through = min(token.value, state.last)
        guard through > state.purgedThrough else { return 0 }
        let removed = try deleteHistory(through: through)
        try tx.treeCreatingIfMissing(RecordTrees.meta)
            .put(RecordTrees.historyPurgedKey, KeyEncoding.primaryKey(through))
        return removed
    }

    /// Deletes the recorded transactions committed before `date`, oldest first up to the first
    /// one that is not (so what stays is every transaction after a token, as consumers read
    /// it, even where clocks of several processes disagree), and returns how many it deleted.
    @discardableResult
    public func purgeHistory(before date: Date) throws -> Int {
        try checkOpen()
        let state = try HistoryState.read(source)
        guard state.last > state.purgedThrough, let cursor = try source.cursor(RecordTrees.history) else { return 0 }
        var through = state.purgedThrough
        var positioned = try cursor.seek(KeyEncoding.primaryKey(state.purgedThrough + 1))
        while positioned {
            let key = try RecordTrees.primaryKey(cursor.key, at: 0, exactLength: 8, tree: RecordTrees.history)
            guard try HistoryCodec.date(cursor.value, token: key) < date else { break }
            through = key
            positioned = try cursor.next()
        }
        return try purgeHistory(through: HistoryToken(through))
    }

    /// Deletes every entry up to `through` and returns how many there were.
    private func deleteHistory(through: UInt64) throws -> Int {
        guard let tree = try tx.tree(RecordTrees.history) else { return 0 }
        var keys: [[UInt8]] = []
        let cursor = tree.makeCursor()
        var positioned = try cursor.first()
        while positioned {
            let key = try RecordTrees.primaryKey(cursor.key, at: 0, exactLength: 8, tree: RecordTrees.history)
            if key > through { break }
            keys.append(cursor.copyKey())
            positioned = try cursor.next()
        }
        for key in keys { try tree.delete(key) }
        return keys.count
    }

    /// Turns the recording of history on or off (``HistoryRecording``); returns whether the
    /// store changed.
    func setHistoryRecording(_ on: Bool) throws -> Bool {
        let state = try HistoryState.read(source)
        guard on != state.isOn else { return false }
        let meta = try tx.treeCreatingIfMissing(RecordTrees.meta)
        if on {
            try meta.put(RecordTrees.historyOnKey, [1])
            // The commits made while nothing recorded them have no tokens: a consumer holding an
            // older token must learn it missed them, so one token is spent and marked purged. A
            // store without a row has nothing to miss.
            if try model.entities.contains(where: { try source.count(RecordTrees.rows($0)) > 0 }) {
                try meta.put(RecordTrees.historyNextKey, KeyEncoding.primaryKey(state.next + 1))
                try meta.put(RecordTrees.historyPurgedKey, KeyEncoding.primaryKey(state.next))
            }
        } else {
            _ = try deleteHistory(through: UInt64.max)
            try meta.delete(RecordTrees.historyOnKey)
            try meta.put(RecordTrees.historyPurgedKey, KeyEncoding.primaryKey(state.last))
        }
        return true
    }
}
