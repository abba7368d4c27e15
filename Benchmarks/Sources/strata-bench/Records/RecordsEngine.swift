import ArgumentParser

/// The engines of `strata-bench records`.
enum RecordsEngineName: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// Strata's record layer: derived attributes kept by deltas at commit.
    case strata
    /// The same, recording persistent history: strata ÷ strata-history is what history costs.
    case strataHistory = "strata-history"
    /// SQLite with the recount triggers Core Data generates for derived attributes.
    case sqliteRecount = "sqlite-recount"
    /// SQLite with hand-written incremental triggers (count ± 1, sum ± amount).
    case sqliteIncremental = "sqlite-incremental"
}

/// What the records workloads need from an engine. Lists and items are named by index
/// (primary key − 1); each method that changes data is one transaction, each query method
/// one read transaction.
protocol RecordsEngine: AnyObject {
    static func open(directory: String, name: RecordsEngineName) throws -> Self

    /// Untimed setup: `lists` lists and the items of `placements`, with every derived value
    /// and trigger as normal operation leaves them (each engine's fastest correct way).
    func load(lists: Int, placements: [Placement]) throws

    /// Inserts the lists with indices `lists`.
    func insertLists(_ lists: Range<Int>) throws
    /// Inserts one item per placement.
    func insertItems(_ items: ArraySlice<Placement>) throws
    /// Moves each placement's item to its list.
    func moveItems(_ moves: ArraySlice<Placement>) throws
    /// Renames a list (its items' copies of the name follow).
    func renameList(_ list: Int, to name: String) throws
    /// Lists whose searchName begins with each prefix, case- and diacritic-insensitively; the
    /// number found.
    func prefixSearch(_ prefixes: ArraySlice<String>) throws -> Int
    /// Items whose indexed `sku` equals each code; the number found.
    func fetchBySKU(_ skus: ArraySlice<String>) throws -> Int
    /// In one transaction, by predicate: every item whose amount is below `limitCents` gets
    /// the amount `cents`; the number changed.
    func updateAmounts(below limitCents: Int64, to cents: Int64) throws -> Int
    /// In one transaction, by predicate: every item whose amount is below `limitCents` is
    /// deleted; the number deleted.
    func deleteItems(below limitCents: Int64) throws -> Int

    /// Inserts notes `notes` in one transaction, note `i` from `texts[i]` (made before the
    /// timing starts: ``TextData/notes(_:)``).
    func insertNotes(_ notes: Range<Int>, texts: [TextData.Note]) throws
    /// Ranked word searches, each for the best ``TextData/resultsShown``, in one read
    /// transaction; the number of results.
    func searchNotes(_ queries: ArraySlice<String>) throws -> Int
    /// The notes whose title holds every word of each query (unranked, all of them), in one
    /// read transaction; the number found.
    func filterNotes(_ queries: ArraySlice<String>) throws -> Int
    /// Sets each note's body to the one given with it (made before the timing starts), in one
    /// transaction.
    func updateNotes(_ updates: ArraySlice<(note: Int, body: String)>) throws

    /// Sums over the whole store (untimed), for comparing engines.
    func digest() throws -> RecordsDigest
    func close() throws
    /// Strata: reopens the closed store and checks pages, indexes and every derived value.
    static func checkStore(directory: String) -> StoreCheck?
}
