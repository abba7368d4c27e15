import Foundation
import StrataStorage

extension RecordStore {
    /// The recorded transactions after `token`, oldest first, at most `limit` of them, read
    /// from one snapshot (``RecordReader/history(after:limit:)``).
    public func history(after token: HistoryToken = .start, limit: Int = .max) throws -> [HistoryTransaction] {
        try read { try $0.history(after: token, limit: limit) }
    }

    /// The token of the newest recorded transaction, or ``HistoryToken/start``.
    public func lastHistoryToken() throws -> HistoryToken {
        try read { try $0.lastHistoryToken() }
    }

    /// Whether commits record persistent history.
    public func isRecordingHistory() throws -> Bool {
        try read { try $0.isRecordingHistory() }
    }

    /// Deletes the recorded transactions up to `token`, in a write transaction of its own
    /// (``RecordTransaction/purgeHistory(through:)``); returns how many it deleted.
    @discardableResult
    public func purgeHistory(through token: HistoryToken) throws -> Int {
        try write { try $0.purgeHistory(through: token) }
    }

    /// Deletes the recorded transactions committed before `date`, in a write transaction of its
    /// own (``RecordTransaction/purgeHistory(before:)``); returns how many it deleted.
    @discardableResult
    public func purgeHistory(before date: Date) throws -> Int {
        try write { try $0.purgeHistory(before: date) }
    }

    /// Applies the open's ``HistoryRecording``: a change is one write transaction, refused on
    /// a read-only open.
    func applyHistoryRecording(_ recording: HistoryRecording, readOnly: Bool) throws {
        guard recording != .asStored else { return }
        let wanted = recording == .on
        guard try isRecordingHistory() != wanted else { return }
        if readOnly {
            throw StrataError.readOnly(reason: "turning history \(wanted ? "on" : "off") writes to the store")
        }
        _ = try write { try $0.setHistoryRecording(wanted) }
    }
}
