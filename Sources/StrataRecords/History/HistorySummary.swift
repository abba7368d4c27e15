/// What a store's persistent history holds (``RecordReader/historySummary()``).
public struct HistorySummary: Sendable, Equatable {
    /// Whether commits record history.
    public var isRecording: Bool
    /// The recorded transactions kept.
    public var transactionCount: Int
    /// Their keys' and entries' bytes (before the page compression).
    public var bytes: UInt64
    /// The oldest kept token, or `nil` when none is kept.
    public var oldest: HistoryToken?
    /// The newest token given (``HistoryToken/start`` when none was).
    public var newest: HistoryToken
    /// Every token up to this one is gone (purged, or never recorded).
    public var purgedThrough: HistoryToken
}
