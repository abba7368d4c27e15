import Foundation

/// Runs one records workload on one engine, generic so each engine's calls are direct.
struct RecordsRunner<Engine: RecordsEngine> {
    let engineName: RecordsEngineName
    let scale: RecordsScale
    /// The directory this run owns.
    let directory: String
    /// The store `bulkinsert` left, for the workloads that start from it.
    let bulkStore: String?

    func run(_ workload: RecordsWorkload) throws -> RecordsRunResult {
        switch workload {
        case .bulkInsert: return try bulkInsert()
        case .insertIntoList(let size): return try insertIntoList(size)
        case .moveItems: return try moveItems()
        case .renameFanout: return try renameFanout()
        case .prefixSearch: return try query(.prefixSearch, RecordsData.prefixQueries(scale.queries, lists: scale.lists, seed: RecordsSeeds.prefixes)) { e, batch in try e.prefixSearch(batch) }
        case .fetchIndexed: return try query(.fetchIndexed, RecordsData.skuQueries(scale.queries, items: scale.bulkItems, seed: RecordsSeeds.skus)) { e, batch in try e.fetchBySKU(batch) }
        case .batchUpdate: return try batchChange(.batchUpdate) { try $0.updateAmounts(below: 10_000, to: 100) }
        case .batchDelete: return try batchChange(.batchDelete) { try $0.deleteItems(below: 10_000) }
        case .textIndex: return try textIndex()
        case .textSearch: return try textSearch()
        case .textFilter: return try textFilter()
        case .textUpdate: return try textUpdate()
        }
    }

    /// The label of `w`'s progress lines.
    private func label(_ w: RecordsWorkload) -> String { "\(w.name) \(engineName.rawValue)" }

    private func result(_ w: RecordsWorkload, ops: Int, _ timing: Timing) -> RecordsRunResult {
        RecordsRunResult(core: RunCore(workload: w.name, engine: engineName.rawValue, ops: ops, timing: timing),
                         details: RecordsRunDetails())
    }

    /// Untimed: the digest, then a timed close, the bytes left, and (Strata) the store's check.
    private func finish(_ engine: Engine, _ r: inout RecordsRunResult) throws {
        r.details.digest = try engine.digest()
        try r.core.close(engine.close, leaving: directory) { Engine.checkStore(directory: directory) }
    }

    private func slices<T>(_ all: [T], _ i: Int) -> ArraySlice<T> {
        all[(i * scale.batch)..<min(all.count, (i + 1) * scale.batch)]
    }

    private func transactions(_ count: Int) -> Int { (count + scale.batch - 1) / scale.batch }

    private func bulkInsert() throws -> RecordsRunResult {
        let engine = try Engine.open(directory: directory, name: engineName)
        let placements = RecordsData.shuffledPlacements(lists: scale.lists, perList: scale.itemsPerList, seed: RecordsSeeds.bulkOrder)
        let listTransactions = transactions(scale.lists)
        let t = try Timing.calls(label(.bulkInsert), listTransactions + transactions(placements.count), ops: scale.lists + placements.count) { i in
            if i < listTransactions {
                try engine.insertLists((i * scale.batch)..<min(scale.lists, (i + 1) * scale.batch))
            } else {
                try engine.insertItems(slices(placements, i - listTransactions))
            }
        }
        var r = result(.bulkInsert, ops: scale.lists + placements.count, t)
        try finish(engine, &r)
        return r
    }

    private func insertIntoList(_ size: Int) throws -> RecordsRunResult {
        let lists = max(1, scale.setupItems / size)
        let setup = RecordsData.shuffledPlacements(lists: lists, perList: size, seed: RecordsSeeds.sizedOrder)
        let engine = try loaded(lists: lists, placements: setup)
        // Each transaction adds its items to one list, the next transaction to the next list:
        // every size pays for one parent per transaction, so only the list's size differs.
        // (Lists of N hold up to N + batch items meanwhile, which flatters recounting at small N.)
        let inserts = (0..<scale.inserts).map { Placement(item: Int32(setup.count + $0), list: Int32(($0 / scale.batch) % lists)) }
        let w = RecordsWorkload.insertIntoList(size: size)
        guard scale.isWindowed(engineName, w) else {
            let t = try Timing.calls(label(w), transactions(inserts.count), ops: inserts.count) { i in try engine.insertItems(slices(inserts, i)) }
            var r = result(w, ops: inserts.count, t)
            try finish(engine, &r)
            return r
        }
        // Recount triggers cost O(list size) per insert: a fixed count on a big list takes
        // minutes, so the run measures what it does in a fixed time instead.
        let t = try Timing.window(label(w), scale.recountWindow, transactions(inserts.count), opsPerCall: scale.batch) { i in
            try engine.insertItems(slices(inserts, i))
        }
        let done = min(inserts.count, t.calls * scale.batch)
        var r = result(w, ops: done, t)
        r.details.timeWindowSeconds = scale.recountWindow
        try finish(engine, &r)
        // The store holds fewer items than the other engines' stores, so the parent cannot
        // compare it with theirs: check it against what this run inserted instead.
        let expected = RecordsDigest.expected(lists: lists, items: setup.count + done)
        guard r.details.digest == expected else {
            throw BenchError("\(engineName.rawValue): \(w.name) after a time window: store has \(r.details.digest), expected \(expected)")
        }
        return r
    }

    private func requireBulkStore() throws -> String {
        guard let bulkStore, FileManager.default.fileExists(atPath: bulkStore) else {
            throw BenchError("\(engineName.rawValue): this workload needs the store bulkinsert leaves")
        }
        return bulkStore
    }

    private func moveItems() throws -> RecordsRunResult {
        // A copy: the query workloads read the bulk store as bulkinsert left it.
        try Measure.copyDirectory(try requireBulkStore(), to: directory)
        let engine = try Engine.open(directory: directory, name: engineName)
        var placements = RecordsData.shuffledPlacements(lists: scale.lists, perList: scale.itemsPerList, seed: RecordsSeeds.bulkOrder)
        let moves = RecordsData.moves(scale.moves, placements: &placements, lists: scale.lists, seed: RecordsSeeds.moves)
        let t = try Timing.calls(label(.moveItems), transactions(moves.count), ops: moves.count) { i in try engine.moveItems(slices(moves, i)) }
        var r = result(.moveItems, ops: moves.count, t)
        try finish(engine, &r)
        return r
    }

    /// One change by predicate on a copy of the bulk store (a tenth of its items: amounts are
    /// spread evenly over 0.01…999.99), one transaction; ops are the rows it changed.
    private func batchChange(_ w: RecordsWorkload, _ change: (Engine) throws -> Int) throws -> RecordsRunResult {
        try Measure.copyDirectory(try requireBulkStore(), to: directory)
        let engine = try Engine.open(directory: directory, name: engineName)
        var changed = 0
        let t = try Timing.calls(label(w), 1, ops: scale.bulkItems / 10) { _ in changed = try change(engine) }
        var r = result(w, ops: changed, t)
        try finish(engine, &r)
        return r
    }

    private func renameFanout() throws -> RecordsRunResult {
        let setup = RecordsData.shuffledPlacements(lists: scale.fanoutLists, perList: scale.fanoutItems, seed: RecordsSeeds.fanout)
        let engine = try loaded(lists: scale.fanoutLists, placements: setup)
        let t = try Timing.calls(label(.renameFanout), scale.renames, ops: scale.renames) { i in
            try engine.renameList(i % scale.fanoutLists, to: "Renamed Ünïcode \(i) \(RecordsData.listName(i))")
        }
        var r = result(.renameFanout, ops: scale.renames, t)
        try finish(engine, &r)
        return r
    }

    private func textIndex() throws -> RecordsRunResult {
        let engine = try Engine.open(directory: directory, name: engineName)
        let texts = TextData.notes(scale.notes)
        let t = try Timing.calls(label(.textIndex), transactions(scale.notes), ops: scale.notes) { i in
            try engine.insertNotes((i * scale.batch)..<min(scale.notes, (i + 1) * scale.batch), texts: texts)
        }
        var r = result(.textIndex, ops: scale.notes, t)
        try finish(engine, &r)
        return r
    }

    /// Notes loaded untimed (in transactions of 1,000), for the search and update workloads,
    /// in a store closed and opened again (see ``reopened(after:)``).
    private func notesEngine() throws -> Engine {
        let texts = TextData.notes(scale.notes)
        return try reopened { engine in
            for start in stride(from: 0, to: scale.notes, by: 1_000) {
                try engine.insertNotes(start..<min(scale.notes, start + 1_000), texts: texts)
            }
        }
    }

    /// A store holding `lists` and `placements`, loaded untimed (see ``reopened(after:)``).
    private func loaded(lists: Int, placements: [Placement]) throws -> Engine {
        try reopened { try $0.load(lists: lists, placements: placements) }
    }

    /// A store `fill` loaded untimed, closed and opened again: the timed part starts from a
    /// store an earlier session left, as the workloads on a copy of the bulk store do. Without
    /// the close, what the setup left unwritten was written by the timed part in one engine and
    /// not the other: SQLite's load checkpoints its write-ahead log when its one transaction
    /// commits, Strata's spreads its checkpoint over the commits that follow and finishes it at
    /// close (decision 80).
    private func reopened(after fill: (Engine) throws -> Void) throws -> Engine {
        let engine = try Engine.open(directory: directory, name: engineName)
        try fill(engine)
        try engine.close()
        return try Engine.open(directory: directory, name: engineName)
    }

    private func textSearch() throws -> RecordsRunResult {
        try textQueries(.textSearch) { try $0.searchNotes($1) }
    }

    private func textFilter() throws -> RecordsRunResult {
        try textQueries(.textFilter) { try $0.filterNotes($1) }
    }

    /// Queries of the notes store: one untimed pass to warm every cache, then the timed pass.
    private func textQueries(_ w: RecordsWorkload, _ ask: (Engine, ArraySlice<String>) throws -> Int) throws -> RecordsRunResult {
        let engine = try notesEngine()
        defer { try? engine.close() }
        let queries = TextData.queries(scale.textQueries, seed: RecordsSeeds.textQueries)
        var warm = 0
        for i in 0..<transactions(queries.count) { warm += try ask(engine, slices(queries, i)) }
        var hits = 0
        let t = try Timing.calls(label(w), transactions(queries.count), ops: queries.count) { i in
            hits += try ask(engine, slices(queries, i))
        }
        guard hits == warm else { throw BenchError("\(engineName.rawValue): \(w.name) found \(hits), then \(warm)") }
        var r = result(w, ops: queries.count, t)
        r.details.digest = try engine.digest()
        r.details.digest.hits = hits
        return r
    }

    private func textUpdate() throws -> RecordsRunResult {
        let engine = try notesEngine()
        var g = SplitMix64(seed: RecordsSeeds.textUpdates)
        let notes = (0..<scale.textUpdates).map { _ in Int(g.next() % UInt64(scale.notes)) }
        let updates = notes.map { (note: $0, body: TextData.note($0, revision: 1).body) }
        let t = try Timing.calls(label(.textUpdate), transactions(updates.count), ops: updates.count) { i in
            try engine.updateNotes(slices(updates, i))
        }
        var r = result(.textUpdate, ops: notes.count, t)
        try finish(engine, &r)
        return r
    }

    /// A query workload on the bulk store: one untimed pass to warm every cache, then the
    /// timed pass, in batches of `scale.batch` queries per read transaction.
    private func query(_ w: RecordsWorkload, _ queries: [String], _ ask: (Engine, ArraySlice<String>) throws -> Int) throws -> RecordsRunResult {
        let engine = try Engine.open(directory: try requireBulkStore(), name: engineName)
        defer { try? engine.close() }
        var warm = 0
        for i in 0..<transactions(queries.count) { warm += try ask(engine, slices(queries, i)) }
        var hits = 0
        let t = try Timing.calls(label(w), transactions(queries.count), ops: queries.count) { i in hits += try ask(engine, slices(queries, i)) }
        guard hits == warm else { throw BenchError("\(engineName.rawValue): \(w.name) found \(hits), then \(warm)") }
        var r = result(w, ops: queries.count, t)
        r.details.digest.hits = hits
        return r
    }
}
