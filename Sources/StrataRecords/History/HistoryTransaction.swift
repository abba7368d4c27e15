import Foundation

/// One committed transaction as the store's persistent history recorded it: who made it,
/// when, and what it changed, object by object.
public struct HistoryTransaction: Sendable, Equatable, Identifiable {
    /// Its position in the history; a consumer resumes after it.
    public var token: HistoryToken
    /// The storage transaction that committed it (``RecordChanges/transactionID``).
    public var transactionID: UInt64
    /// When it committed (the clock of the process that committed it).
    public var date: Date
    /// The name the writer gave (``RecordTransaction/author``), or `nil`.
    public var author: String?
    /// What it changed: inserts, updates and deletes (cascades included) and many-to-many
    /// links, in the order the commit wrote them.
    public var changes: [HistoryChange]

    /// A transaction with these fields, as a history reader makes one (tools that replay or
    /// forward history make their own).
    public init(token: HistoryToken, transactionID: UInt64, date: Date, author: String?, changes: [HistoryChange]) {
        self.token = token
        self.transactionID = transactionID
        self.date = date
        self.author = author
        self.changes = changes
    }

    /// The token identifies the transaction.
    public var id: HistoryToken { token }
}
