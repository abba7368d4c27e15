import Foundation
import StrataStorage

/// A store of objects described by a ``Model``, on a Strata page file.
///
/// ```swift
/// let store = try RecordStore(path: "todo.strata", model: model)
/// let list = try store.write { tx in try tx.insert("TodoList", ["name": "Home"]) }
/// let count = try store.read { try $0.value("itemCount", of: list) }
/// ```
public final class RecordStore: Sendable {
    /// The model the store was opened with.
    public let model: Model
    /// The page file underneath: for this package's tools and tests only. A user reaches it
    /// through ``checkPages()``, ``checkpoint()``, ``compact()``, ``backup(to:)`` and ``info()``;
    /// rows change only through ``RecordTransaction``.
    package let storage: Store
    private let statisticsState = Mutex(CommitStatistics())
    /// The word vocabularies of this store's write transactions (``WordVocabulary``).
    let vocabularies = WordVocabularyPool()
    /// The word indexes' batches of recent changes its readers decoded (``WordBatchCache``).
    let wordBatches = WordBatchCache()

    /// What the last commit touched: the measure that derived attributes cost in proportion to
    /// the change, not to the size of a relationship.
    public struct CommitStatistics: Sendable, Equatable {
        /// Rows read from storage (not counting rows the transaction had already touched).
        public var rowsRead = 0
        /// Row writes, derived-value updates included.
        public var rowsWritten = 0
        /// B+tree pages the commit copied or created.
        public var pagesTouched = 0
    }

    /// Opens (or creates) the store at `path`. A store that holds another model fails with
    /// `StrataError.modelMismatch`, listing the differences, unless `migration` says how to
    /// migrate it (``MigrationPolicy``); one that holds a newer version of the model
    /// (``Model/version``) fails with `StrataError.unsupportedModelVersion` whatever the
    /// policy. A store whose index keys were written before
    /// record format 2 (FORMAT.md §12) is rebuilt from its rows when opened read-write, and
    /// refused with `StrataError.readOnly` when opened read-only. `history` turns the recording
    /// of persistent history on or off for every writer of the store (``HistoryRecording``).
    public init(path: String, model: Model, options: StoreOptions = StoreOptions(),
                migration: MigrationPolicy = .none, history: HistoryRecording = .asStored) throws {
        self.model = model
        self.storage = try Store(path: path, options: options)
        do {
            try checkModel(readOnly: options.readOnly, migration: migration)
            try applyHistoryRecording(history, readOnly: options.readOnly)
        } catch {
            try? storage.close()
            throw error
        }
    }

    /// Opens the store at `path` with the model stored in it (no Swift model needed): for
    /// tools that inspect, dump and check any store. The rebuilt model has the stored
    /// validation rules, but a custom rule comes back by name only and accepts every value (its
    /// check is the program's code), so open read-only unless you know the rules do not matter.
    public convenience init(path: String, options: StoreOptions = StoreOptions()) throws {
        let storage = try Store(path: path, options: options)
        do {
            try self.init(opening: storage)
        } catch {
            try? storage.close()
            throw error
        }
    }

    /// The record layer over an open page file, with the model stored in it.
    public init(opening storage: Store) throws {
        guard let stored = try storage.read({ tx in try tx.tree(RecordTrees.meta)?.get(RecordTrees.schemaKey) }) else {
            throw StrataError.invalidArgument("the store holds no record model (a plain key/value store)")
        }
        // Split as the checker splits it: the model keeps these lines to compare with the store's.
        let lines = String(decoding: stored, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        try KeyFormat.refuseNewer(storage)
        // A malformed version entry is the checker's to report: the tool still opens the store.
        let version = try? storage.read { tx in
            try RecordTrees.storedModelVersion(try tx.tree(RecordTrees.meta)?.get(RecordTrees.modelVersionKey))
        }
        self.model = try StoredModel.parse(lines, version: version ?? 1)
        self.storage = storage
    }

    /// Whether the store at the other end of `storage` holds a record model.
    public static func hasModel(_ storage: Store) throws -> Bool {
        try storage.read { tx in try tx.tree(RecordTrees.meta)?.get(RecordTrees.schemaKey) != nil }
    }

    /// Runs `body` on a snapshot: a consistent view that later commits do not change. The
    /// reader is valid inside `body` only: kept and used later, it throws `StrataError.closed`.
    public func read<T>(_ body: (RecordReader) throws -> T) throws -> T {
        try storage.read { tx in
            let reader = RecordReader(model: model, source: .read(tx))
            reader.wordBatches = wordBatches
            defer { reader.isOpen = false }
            return try body(reader)
        }
    }

    /// Runs `body` in the write transaction; commits when it returns (delete rules and derived
    /// attributes settle, then `deny`, uniqueness and validation are judged), rolls back if it
    /// throws. Reads through the transaction see derived values settled (see
    /// ``RecordTransaction``). The transaction is valid inside `body` only: kept and used
    /// later, it throws `StrataError.closed`.
    public func write<T>(_ body: (RecordTransaction) throws -> T) throws -> T {
        try write(body, prepared: { _ in })
    }

    /// The write, with `prepared` called on the transaction once it settled and passed its
    /// checks, just before the commit (``writeReportingChanges(_:)`` collects its change set there).
    func write<T>(_ body: (RecordTransaction) throws -> T, prepared: (RecordTransaction) -> Void) throws -> T {
        var stats = CommitStatistics()
        var written: [(tree: String, id: UInt64, batch: WordChanges.Decoded)] = [], merged: [String: UInt64] = [:]
        let result = try storage.write { tx in
            let transaction = RecordTransaction(model: model, tx: tx, vocabularies: vocabularies)
            transaction.wordBatches = wordBatches
            defer {
                transaction.isOpen = false
                transaction.returnVocabulary()
            }
            let value = try body(transaction)
            try transaction.prepareCommit()
            prepared(transaction)
            stats.rowsRead = transaction.rowsRead
            stats.rowsWritten = transaction.rowsWritten
            written = transaction.writtenBatches
            merged = transaction.mergedBatches
            return value
        }
        // Committed: the batches are the store's now, and no other batch will get their ids.
        wordBatches.commit(written: written, merged: merged)
        stats.pagesTouched = storage.statistics.pagesTouchedByLastCommit
        statisticsState.withLock { $0 = stats }
        return result
    }

    /// The same, from `async` code: waits for the writer without blocking a thread.
    public func write<T: Sendable>(_ body: @Sendable (RecordTransaction) throws -> T) async throws -> T {
        let model = self.model, vocabularies = self.vocabularies, wordBatches = self.wordBatches
        let result = try await storage.write { tx in
            let transaction = RecordTransaction(model: model, tx: tx, vocabularies: vocabularies)
            transaction.wordBatches = wordBatches
            defer {
                transaction.isOpen = false
                transaction.returnVocabulary()
            }
            let value = try body(transaction)
            try transaction.prepareCommit()
            return (value, transaction.writtenBatches, transaction.mergedBatches)
        }
        wordBatches.commit(written: result.1, merged: result.2)
        return result.0
    }

    /// What the last commit made through ``write(_:)-2573y`` touched.
    public var lastCommitStatistics: CommitStatistics { statisticsState.withLock { $0 } }

    /// Checkpoints and closes the page file.
    public func close() throws { try storage.close() }
}

import Synchronization
