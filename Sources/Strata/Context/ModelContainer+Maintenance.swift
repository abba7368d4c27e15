import StrataRecords
import StrataStorage

/// The store's maintenance, through the container: what the record store lets through of its
/// page file (``RecordStore/checkPages()`` and the rest), never its rows.
extension ModelContainer {
    /// Checks the page file and every structure of the record layer (indexes, inverses, derived
    /// values): the problems found, at most `limit` of the record layer's; empty when sound.
    public func check(limit: Int = 100) throws -> [String] {
        try requireOpen("check")
        let pages = try store.checkPages().problems
        let records = try store.read { try $0.checkRecords(limit: limit) }
        return pages + records
    }

    /// Writes a checkpoint now.
    public func checkpoint() throws {
        try requireOpen("checkpoint")
        try store.checkpoint()
    }

    /// Rewrites the store's file with only its live pages, while contexts carry on.
    @discardableResult
    public func compact() throws -> Store.CopyReport {
        try requireOpen("compact")
        return try store.compact()
    }

    /// Writes a consistent copy of the store to `destination`.
    @discardableResult
    public func backup(to destination: String) throws -> Store.CopyReport {
        try requireOpen("backup")
        return try store.backup(to: destination)
    }
}
