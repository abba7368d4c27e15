import Foundation
import StrataStorage

/// One write transaction of the record layer: inserts, updates, relationship changes and
/// deletes, applied to the storage transaction as they are made.
///
/// Delete rules (cascade and nullify) and derived attributes *settle* before any read through
/// this transaction and at commit: a read sees every derived value as the commit would store
/// it (insert an item, then read its list's `itemCount`: the new count). Settling costs what
/// changed since the last settle, as the commit's derivation does; a read after no change
/// costs nothing extra. `deny` rules, uniqueness and validation are judged at commit.
///
/// A transaction lives for the closure of ``RecordStore/write(_:)-2573y``: used
/// after it returned or threw, every method throws `StrataError.closed`.
public final class RecordTransaction: RecordReader {
    let tx: WriteTransaction
    /// The time `now()` stamps on the rows this transaction changes: when it began (as
    /// PostgreSQL's `now()`), one value for the whole commit.
    let timestamp: Date
    /// The name the persistent history records for this transaction (``HistoryTransaction/author``):
    /// which part of the program, or which process, made it. `nil` records none.
    public var author: String?
    /// Whether the commit may record history (when the store records it): a migration does not.
    var recordsHistory = true
    /// Where the transaction takes a store's word vocabulary from and gives it back (nil: a
    /// vocabulary of its own, as a migration's).
    let vocabularies: WordVocabularyPool?
    /// The words this transaction indexed, as slots (``WordVocabulary``): taken when it first
    /// changes a word index.
    private var vocabulary: WordVocabulary?
    /// The change set the commit computed for the history, kept for the did-save report.
    var committedChanges: RecordChanges?
    // The row bookkeeping below is touched several times per row read or written, and is not
    // checked for exclusivity at run time (a `swift_beginAccess` call per access; decision 50):
    // only this class's own methods change it, none holds an access across other code (the in-place
    // changes go through small local functions that call nothing else), and what reads it elsewhere
    // (the derivation's deltas, the checker) reads a copy at once. Keep it so.

    /// Every row this transaction read or wrote: one dictionary, so a row costs one lookup.
    @exclusivity(unchecked) var rowStates: [RowKey: RowState] = [:]
    /// Rows written, per entity, in the order of their first write (the change set).
    @exclusivity(unchecked) var writtenKeys: [[RowKey]]
    /// Rows written since the last settle, per entity, in write order: the change set the
    /// next settle derives from.
    @exclusivity(unchecked) var pendingKeys: [[RowKey]]
    /// Rows whose new state is not in the rows tree yet: each is encoded once, at commit (or
    /// before a scan of the rows tree), however often derivation changes it.
    @exclusivity(unchecked) var dirtyKeys: [RowKey] = []
    /// The buffers index entry keys are built in, reused by every entry.
    @exclusivity(unchecked) private var oldIndexKey: [UInt8] = [], newIndexKey: [UInt8] = []
    /// Word index postings not yet in their trees, per entity and index (empty for an entity
    /// not touched): see ``flushWords()``.
    var pendingWords: [[PendingWords]]
    var hasPendingWords = false
    /// Flushes of word changes so far: the next one's number in its batch id.
    var wordFlushes = 0
    /// The batches of recent word changes this transaction wrote and did not merge away, as
    /// written: the store keeps them once the transaction committed (``WordBatchCache``), and a
    /// merge later in the transaction reads its own from here.
    var writtenBatches: [(tree: String, id: UInt64, batch: WordChanges.Decoded)] = []
    /// The word indexes whose batches this transaction merged into the blocks, with the last
    /// id merged: the store forgets them once the transaction committed.
    var mergedBatches: [String: UInt64] = [:]
    /// Rows a change by predicate rewrote or deleted from their bytes, holding no state here
    /// (``RowRewrite``).
    @exclusivity(unchecked) var rewrittenRows = RewrittenRows()
    /// Whether ``writtenKeys`` may list a row more than once: a change by predicate lists each
    /// row it writes from its bytes (no state records that it did), and a later write of the
    /// row lists it again. What reads the list for a change set takes each row once.
    @exclusivity(unchecked) var writtenKeysRepeat = false
    /// The `@count` and `@sum` deltas of those rows, by parent entity and derived field, until
    /// the next settle applies them with the rest.
    var rewrittenSums: [RewrittenSumKey: ParentDeltas] = [:]
    /// Deleted rows, in order; those from `settledDeletes` on have not had their rules run.
    var pendingDeletes: [RowKey] = []
    var settledDeletes = 0
    /// `deny` rules met while settling: judged at commit, when every delete is known.
    var denials: [(RowKey, ResolvedRelationship, [RowKey])] = []
    /// Many-to-many links made or broken: (entity, relationship, row, other row, added);
    /// those from `settledLinks` on are not settled yet.
    var linkChanges: [LinkChange] = []
    var settledLinks = 0
    /// Whether anything changed since the last settle.
    @exclusivity(unchecked) var needsSettle = false
    /// The error a settle failed with: the transaction cannot go on (its derived values are
    /// half moved), so every later call, and the commit, throws it again.
    var settleFailure: (any Error)?
    var nextPrimaryKeys: KeyCounters
    /// The store's key range, read from `meta` the first time a key is allocated or checked.
    var primaryKeyRange: PrimaryKeyRange?
    /// The storage trees rows and their entries are written to, looked up once each.
    let trees: WriteTrees
    @exclusivity(unchecked) var rowsRead = 0
    @exclusivity(unchecked) var rowsWritten = 0
    /// The row the commit's checks refused, when they threw (see ``BrokenRule``).
    package internal(set) var brokenRule: BrokenRule?
    /// Engine counters: settles that had something to do, and changed rows they examined.
    var settles = 0
    var rowsExamined = 0

    struct LinkChange {
        var entity: Int
        var relationship: String
        var row: UInt64
        var other: UInt64
        var added: Bool
    }

    /// A row as the transaction knows it.
    struct RowState {
        /// As it was when the transaction began (`nil`: it did not exist).
        var original: [StoredValue]?
        /// As it is now (`nil`: deleted, or never existed).
        var current: [StoredValue]?
        /// As it was at the last settle: the state its derived values and its contributions
        /// to other rows' derived values reflect.
        var settled: [StoredValue]?
        /// Changed by this transaction (else only read).
        var written = false
        /// Changed since the last settle.
        var pending = false
        /// Changed since it was last put into its rows tree.
        var dirty = false
        /// Its own stored attributes or to-one relationships were set by a caller (inserted,
        /// updated, or nullified by a delete rule), not only derived (`now()`, validation).
        var explicit = false

        init(original: [StoredValue]?) {
            self.original = original
            self.current = original
            self.settled = original
        }
    }

    init(model: Model, tx: WriteTransaction, timestamp: Date = Date(), vocabularies: WordVocabularyPool? = nil) {
        self.tx = tx
        self.vocabularies = vocabularies
        self.timestamp = timestamp
        self.writtenKeys = Array(repeating: [], count: model.entities.count)
        self.pendingKeys = Array(repeating: [], count: model.entities.count)
        self.pendingWords = Array(repeating: [], count: model.entities.count)
        self.nextPrimaryKeys = KeyCounters(entities: model.entities.count)
        self.trees = WriteTrees(tx: tx, model: model)
        super.init(model: model, source: .write(tx))
    }

    /// The row as it was when the transaction began, or `nil` when this transaction has not
    /// changed it (`.some(nil)`: inserted here).
    func original(_ key: RowKey) -> [StoredValue]?? {
        guard let state = rowStates[key], state.written else { return nil }
        return .some(state.original)
    }

    /// The row as of the last settle, or `nil` when it has not changed since
    /// (`.some(nil)`: it did not exist then).
    func settled(_ key: RowKey) -> [StoredValue]?? {
        guard let state = rowStates[key], state.pending else { return nil }
        return .some(state.settled)
    }

    /// The rows of `entity` changed since the last settle (inserted, updated or deleted).
    func touched(_ entity: Int) -> [RowKey] { pendingKeys[entity] }

    /// The many-to-many link changes since the last settle.
    var pendingLinkChanges: ArraySlice<LinkChange> { linkChanges[settledLinks...] }

    override func row(_ key: RowKey) throws -> [StoredValue]? {
        if let state = rowStates[key] { return state.current }
        rowsRead += 1
        let loaded = try super.row(key)
        rowStates[key] = RowState(original: loaded)
        return loaded
    }

    /// The rows tree of `entity` as this transaction has it, looked up by name once (a point read
    /// looked it up per row, hashing its name).
    override func pointReadTree(_ entity: EntityDescription) throws -> WriteTree? {
        try trees.existingRows(entity)
    }

    override func row(_ key: RowKey, stored: UnsafeRawBufferPointer) throws -> [StoredValue]? {
        if let state = rowStates[key] { return state.current }
        return try super.row(key, stored: stored)
    }

    override func row(_ key: RowKey, stored: UnsafeRawBufferPointer, needed: [Bool]?) throws -> [StoredValue]? {
        if let state = rowStates[key] { return state.current }
        return try super.row(key, stored: stored, needed: needed)
    }

    /// Before a public read: settled derived values and delete rules.
    override func willRead() throws {
        try super.willRead()
        try settle()
    }

    override func willScanRows() throws {
        try willRead()
        try flushRows()
        try flushWords()
    }

    /// Runs the delete rules (cascade, nullify) of the deletes since the last settle and
    /// derives what changed since then, so reads see what the commit would store. Nothing
    /// changed: returns at once. A failure (an overflow) ends the transaction's usefulness:
    /// it is thrown again by every later call and by the commit.
    func settle() throws {
        if let settleFailure { throw settleFailure }
        guard needsSettle else { return }
        settles += 1
        do {
            try applyDeleteRules()
            try DerivationEngine(tx: self, timestamp: timestamp).run()
        } catch {
            settleFailure = error
            throw error
        }
        for keys in pendingKeys {
            for key in keys {
                // One in-place access: `settled` shares the row's storage until it changes again.
                func mark(_ state: inout RowState) {
                    state.settled = state.current
                    state.pending = false
                }
                mark(&rowStates[key]!)
            }
        }
        for i in pendingKeys.indices { pendingKeys[i].removeAll(keepingCapacity: true) }
        settledLinks = linkChanges.count
        needsSettle = false
    }

    /// Throws `closed` once the transaction's closure has ended, and the settle failure if one
    /// ended its usefulness.
    override func checkOpen() throws {
        try super.checkOpen()
        if let settleFailure { throw settleFailure }
    }

    /// Puts every changed row into its rows tree.
    func flushRows() throws {
        // One in-place access per row: its state is taken as clean, its row returned.
        func takeDirty(_ state: inout RowState?) -> [StoredValue]?? {
            guard state?.dirty == true else { return nil }
            state!.dirty = false
            return .some(state!.current)
        }
        // Each row is encoded into one buffer, and its key read from the stack: no allocation
        // per row.
        var encoded: [UInt8] = []
        for key in dirtyKeys {
            guard let current = takeDirty(&rowStates[key]) else { continue }
            let entity = model.entities[key.entity]
            let rows = try trees.rows(entity)
            try withUnsafeBytes(of: key.pk.bigEndian) { pk in
                if let new = current {
                    RowCodec.encode(new, fields: entity.fields, into: &encoded)
                    try encoded.withUnsafeBytes { try rows.put(pk, $0) }
                } else {
                    _ = try rows.delete(pk)
                }
            }
        }
        dirtyKeys.removeAll(keepingCapacity: true)
    }

    // MARK: Public mutations

    /// Inserts an object. `values` holds attributes (any ``ValueConvertible``) and to-one
    /// relationships (an ``ObjectID``); unnamed attributes take their defaults. Derived
    /// attributes get their values when the transaction next settles (a read, or the commit).
    ///
    /// Throws `StrataError.validation` naming entity and attribute for a value its attribute
    /// cannot hold exactly (NaN, an infinity, a number out of range or too precise, another
    /// kind of value, an ``ObjectID`` for an attribute), `objectNotFound` for a to-one target
    /// that does not exist.
    @discardableResult
    public func insert(_ entity: String, _ values: [String: any ValueConvertible] = [:]) throws -> ObjectID {
        let entityDescription = try self.entity(entity)
        let key = RowKey(entity: entityDescription.index, pk: try allocatePrimaryKey(entityDescription))
        return try writeNewRow(entityDescription, key, values)
    }

    /// Writes a new row of `entity` under `key` (a key that names no stored row) from `values`.
    private func writeNewRow(_ entity: EntityDescription, _ key: RowKey,
                             _ values: [String: any ValueConvertible]) throws -> ObjectID {
        var row = newRow(entity)
        try assign(values, to: &row, entity: entity)
        return try writeNewRow(entity, key, row)
    }

    /// A row of `entity` before the caller's values: defaults, and zero for the counts and sums of
    /// its (empty) relationships.
    func newRow(_ entity: EntityDescription) -> [StoredValue] {
        var row = entity.fields.map { $0.defaultValue ?? .null }
        for derived in entity.derivedAttributes {
            // An empty relationship counts and sums to zero from the start.
            if case .aggregate(let function, _, _) = derived.parsed, function == .count || function == .sum {
                row[derived.field] = derived.type == .decimal
                    ? .decimal(0) : (derived.type == .double ? .double(0) : .int(0))
            }
        }
        return row
    }

    /// Writes `row` as the new row of `entity` under `key` (a key that names no stored row).
    func writeNewRow(_ entity: EntityDescription, _ key: RowKey, _ row: [StoredValue]) throws -> ObjectID {
        try writeNewRow(key, row)
        return ObjectID(entity: entity.name, primaryKey: key.pk)
    }

    /// Writes `row` as the new row under `key` (a key that names no stored row).
    func writeNewRow(_ key: RowKey, _ row: [StoredValue]) throws {
        // A fresh or reserved primary key names no stored row (keys are never reused): nothing
        // to read, nothing to look up.
        try write(key, row, from: RowState(original: nil), explicit: true)
    }

    /// Makes room in the transaction's row table for `count` more rows: the object layer's
    /// save knows how many objects it writes, and a table grown one doubling at a time rehashed
    /// every row it held at each (decision 50).
    package func reserveRows(_ count: Int) {
        rowStates.reserveCapacity(rowStates.count + max(count, 0))
    }

    /// ``storedRow(entityIndex:primaryKey:)`` without settling first where settling could
    /// change nothing a caller sees: the model derives nothing and no delete awaits its rules
    /// (then a settle only moves bookkeeping that derivation reads). The object layer's save
    /// reads the row of each object it updates (optimistic locking) right after writing the
    /// one before, so each read settled again. Otherwise it settles as that read does.
    package func unsettledRow(entityIndex: Int, primaryKey pk: UInt64) throws -> [StoredValue]? {
        guard model.derivationOrder.isEmpty, settledDeletes == pendingDeletes.count else {
            return try storedRow(entityIndex: entityIndex, primaryKey: pk)
        }
        try checkOpen()
        guard model.entities.indices.contains(entityIndex) else { return nil }
        return try row(RowKey(entity: entityIndex, pk: pk))
    }

    /// The range this store allocates primary keys from (``PrimaryKeyRange``), read once per
    /// transaction: range 0 until the store adopts another.
    func allocationRange() throws -> PrimaryKeyRange {
        if let primaryKeyRange { return primaryKeyRange }
        let range = try RecordTrees.storedKeyRange(try tx.tree(RecordTrees.meta)?.get(RecordTrees.keyRangeKey))
        primaryKeyRange = range
        return range
    }

    /// Makes `range` the one this store allocates primary keys from, from this transaction on
    /// (when it commits): each entity's counter starts at the range's first key, or past the
    /// largest key the store already holds in it. Rows keep their keys, whatever range holds
    /// them. A store of a dataset adopts the range the dataset handed it (decision 110);
    /// adopting the range already held changes nothing.
    package func adoptKeyRange(_ range: PrimaryKeyRange) throws {
        try checkOpen()
        guard try allocationRange() != range else { return }
        try tx.treeCreatingIfMissing(RecordTrees.meta).put(RecordTrees.keyRangeKey, KeyEncoding.primaryKey(range.number))
        primaryKeyRange = range
        for entity in model.entities {
            let largest = try largestKey(of: entity, in: range)
            // A key must be left to hand out: the range's last is never handed out.
            guard largest.map({ $0 + 1 < range.upperBound - 1 }) ?? true else {
                throw StrataError.limitExceeded(what: "primary keys of \(entity.name) in \(range)",
                                                limit: UInt64(1) << PrimaryKeyRange.keyBits)
            }
            nextPrimaryKeys[entity.index] = largest.map { $0 + 1 } ?? range.lowerBound
        }
    }

    /// Reserves `count` primary keys of `entity` for objects inserted later with
    /// ``insert(_:primaryKey:_:)`` (the object layer's `obtainPermanentIDs`): the key counter
    /// moves past them when the transaction commits, so no other insert ever gets them.
    package func reservePrimaryKeys(_ entity: String, count: Int) throws -> [UInt64] {
        let entityDescription = try self.entity(entity)
        return try (0..<max(count, 0)).map { _ in try allocatePrimaryKey(entityDescription) }
    }

    /// Inserts an object under a primary key reserved by ``reservePrimaryKeys(_:count:)`` in an
    /// earlier committed transaction, or under a key outside this store's range (another store's
    /// or a server's, which this store never allocates: a replicated row). Throws
    /// `invalidArgument` for a key of the store's range the counter has not passed, and
    /// `conflict` for a key that names a row. The caller passes only keys it reserved and has
    /// not used, or that name a row elsewhere: a deleted row's key would pass these checks, and
    /// keys are never to be reused.
    @discardableResult
    package func insert(_ entity: String, primaryKey pk: UInt64,
                        _ values: [String: any ValueConvertible]) throws -> ObjectID {
        let entityDescription = try self.entity(entity)
        return try writeNewRow(entityDescription, try reservedRowKey(entityDescription, pk), values)
    }

    /// The row key of `pk`, a primary key of `entity` reserved earlier and not used yet, or
    /// one outside the store's range.
    func reservedRowKey(_ entity: EntityDescription, _ pk: UInt64) throws -> RowKey {
        let next = try nextPrimaryKeys[entity.index] ?? storedPrimaryKeyCounter(entity)
        nextPrimaryKeys[entity.index] = next
        let range = try allocationRange()
        guard pk > 0, pk < next || pk >= range.upperBound || pk < range.lowerBound else {
            throw StrataError.invalidArgument(
                "primary key \(pk) of \(entity.name) was never reserved (the counter of \(range) is at \(next))")
        }
        let key = RowKey(entity: entity.index, pk: pk)
        guard try row(key) == nil else {
            throw StrataError.conflict(entity: entity.name, properties: [], reason: "primary key \(pk) is already used")
        }
        return key
    }

    /// Changes attributes and to-one relationships of an existing object.
    public func update(_ id: ObjectID, _ values: [String: any ValueConvertible]) throws {
        let key = try rowKey(id)
        try rewriteRow(key) { row in try assign(values, to: &row, entity: model.entities[key.entity]) }
    }

    /// Reads the stored row at `key` (`objectNotFound` if there is none), lets `change` set
    /// values in it, and writes it back as changed by the caller.
    func rewriteRow(_ key: RowKey, _ change: (inout [StoredValue]) throws -> Void) throws {
        // The state is looked up (or read) once: `change` only reads other rows.
        let state = try rowState(key)
        guard var row = state.current else {
            throw StrataError.objectNotFound(entity: model.entities[key.entity].name, primaryKey: key.pk)
        }
        try change(&row)
        try write(key, row, from: state, explicit: true)
    }

    /// ``rewriteRow(_:_:)`` of a row that a scan of this transaction's rows tree read as
    /// `stored`: a row the transaction holds no state for yet takes it from those bytes, and is
    /// stored once, changed (adopting it first, then rewriting it, accessed the table three
    /// times).
    func rewriteScannedRow(_ key: RowKey, stored: UnsafeRawBufferPointer,
                           _ change: (inout [StoredValue]) throws -> Void) throws {
        let state = try scannedState(key, stored: stored)
        guard var row = state.current else {
            throw StrataError.objectNotFound(entity: model.entities[key.entity].name, primaryKey: key.pk)
        }
        try change(&row)
        try write(key, row, from: state, explicit: true)
    }

    /// ``deleteRow(_:)`` of a row that a scan of this transaction's rows tree read as `stored`,
    /// its state taken from those bytes as ``rewriteScannedRow(_:stored:_:)`` takes it; false,
    /// nothing changed, when the row is gone already (a cascade took it).
    func deleteScannedRow(_ key: RowKey, stored: UnsafeRawBufferPointer) throws -> Bool {
        let state = try scannedState(key, stored: stored)
        guard state.current != nil else { return false }
        try write(key, nil, from: state, explicit: false)
        pendingDeletes.append(key)
        return true
    }

    /// The state the transaction holds for `key`, or one made from `stored` (the bytes a scan
    /// of its rows tree read), not stored in the table: the caller's write stores it.
    private func scannedState(_ key: RowKey, stored: UnsafeRawBufferPointer) throws -> RowState {
        if let known = rowStates[key] { return known }
        rowsRead += 1
        return RowState(original: try super.row(key, stored: stored))
    }

    /// The state of the row at `key`, read and kept as ``row(_:)`` does on first use.
    private func rowState(_ key: RowKey) throws -> RowState {
        if let state = rowStates[key] { return state }
        rowsRead += 1
        let state = RowState(original: try super.row(key))
        rowStates[key] = state
        return state
    }

    /// Throws `objectNotFound` unless a row is stored (or pending) at `key`.
    func requireRow(_ key: RowKey) throws {
        guard try row(key) != nil else {
            throw StrataError.objectNotFound(entity: model.entities[key.entity].name, primaryKey: key.pk)
        }
    }

    /// Sets a to-one relationship (`nil` clears it); the inverse to-many follows.
    public func set(_ relationship: String, of id: ObjectID, to target: ObjectID?) throws {
        try update(id, [relationship: target.map { $0 as any ValueConvertible } ?? StoredValue.null])
    }

    /// Adds `member` to a to-many relationship of `id` (for a to-many whose inverse is to-one,
    /// this sets the member's to-one; for many-to-many it links both ways).
    public func add(_ member: ObjectID, to relationship: String, of id: ObjectID) throws {
        let (rel, key, other) = try toMany(relationship, id, member)
        if rel.inverseField != nil {
            try set(rel.inverse, of: member, to: id)
            return
        }
        try link(rel, key, other, add: true)
    }

    /// Removes `member` from a to-many relationship of `id`.
    public func remove(_ member: ObjectID, from relationship: String, of id: ObjectID) throws {
        let (rel, key, other) = try toMany(relationship, id, member)
        if rel.inverseField != nil {
            let memberRow = try row(RowKey(entity: rel.targetIndex, pk: member.primaryKey))
            if case .int(let owner)? = memberRow?[rel.inverseField!],
               UInt64(bitPattern: owner) == id.primaryKey {
                try set(rel.inverse, of: member, to: nil)
            }
            return
        }
        try link(rel, key, other, add: false)
    }

    /// Deletes an object. Its delete rules cascade and nullify when the transaction next
    /// settles (before a read through it, or at commit); `deny` is judged at commit, so
    /// objects deleted later in the same transaction do not count against it.
    public func delete(_ id: ObjectID) throws {
        let key = try rowKey(id)
        guard try row(key) != nil else {
            throw StrataError.objectNotFound(entity: id.entity, primaryKey: id.primaryKey)
        }
        try deleteRow(key)
    }

    /// Deletes the row at `key`, which exists; its rules run at the next settle.
    func deleteRow(_ key: RowKey) throws {
        try write(key, nil)
        pendingDeletes.append(key)
    }

    // MARK: Internals

    private func toMany(_ relationship: String, _ id: ObjectID, _ member: ObjectID) throws
        -> (ResolvedRelationship, RowKey, RowKey) {
        let key = try rowKey(id)
        let entity = model.entities[key.entity]
        guard let rel = entity.relationship(relationship), rel.isToMany else {
            throw StrataError.invalidArgument("'\(relationship)' is not a to-many relationship of \(entity.name)")
        }
        guard member.entity == rel.target else {
            throw StrataError.invalidArgument(
                "\(entity.name).\(relationship) holds \(rel.target) objects, not \(member.entity)")
        }
        guard try row(key) != nil else {
            throw StrataError.objectNotFound(entity: entity.name, primaryKey: id.primaryKey)
        }
        let other = try rowKey(member)
        guard try row(other) != nil else {
            throw StrataError.objectNotFound(entity: member.entity, primaryKey: member.primaryKey)
        }
        return (rel, key, other)
    }

    /// Links or unlinks two rows through a many-to-many relationship (both join trees).
    func link(_ rel: ResolvedRelationship, _ key: RowKey, _ other: RowKey, add: Bool) throws {
        let entity = model.entities[key.entity]
        let otherEntity = model.entities[other.entity]
        let here = try tx.treeCreatingIfMissing(RecordTrees.join(entity, rel.name))
        let there = try tx.treeCreatingIfMissing(RecordTrees.join(otherEntity, rel.inverse))
        let hereKey = RecordTrees.pair(key.pk, other.pk)
        let thereKey = RecordTrees.pair(other.pk, key.pk)
        if add {
            guard try here.get(hereKey) == nil else { return }
            try here.put(hereKey, [])
            try there.put(thereKey, [])
        } else {
            guard try here.delete(hereKey) else { return }
            _ = try there.delete(thereKey)
        }
        needsSettle = true
        linkChanges.append(LinkChange(entity: key.entity, relationship: rel.name, row: key.pk, other: other.pk,
                                      added: add))
        linkChanges.append(LinkChange(entity: other.entity, relationship: rel.inverse, row: other.pk,
                                      other: key.pk, added: add))
    }

    func allocatePrimaryKey(_ entity: EntityDescription) throws -> UInt64 {
        let next = try nextPrimaryKeys[entity.index] ?? storedPrimaryKeyCounter(entity)
        // Keys are never reused and never leave the store's range, so its last key can never be
        // handed out (the counter would pass the range).
        let range = try allocationRange()
        guard next < range.upperBound - 1 else {
            throw StrataError.limitExceeded(what: "primary keys of \(entity.name) in \(range)",
                                            limit: UInt64(1) << PrimaryKeyRange.keyBits)
        }
        nextPrimaryKeys[entity.index] = next + 1
        return next
    }

    /// The entity's stored key counter, checked once per transaction against the largest key
    /// of the store's range in its rows tree (one seek): a counter at or below a key in use —
    /// damaged, forged, or lost with the meta tree — would make the next insert overwrite a row
    /// silently, and one outside the range would hand out another store's keys.
    private func storedPrimaryKeyCounter(_ entity: EntityDescription) throws -> UInt64 {
        let range = try allocationRange()
        let stored = try tx.tree(RecordTrees.meta)?.get(RecordTrees.nextKey(entity))
            .map { try RecordTrees.storedPrimaryKey($0, tree: RecordTrees.meta) }
        let next = stored ?? range.lowerBound
        guard next >= range.lowerBound, next < range.upperBound else {
            throw StrataError.corrupt("the primary-key counter of \(entity.name) (\(next)) lies outside the "
                                      + "store's \(range)", offset: nil)
        }
        if let largest = try largestKey(of: entity, in: range), next <= largest {
            throw StrataError.corrupt("the primary-key counter of \(entity.name) (\(next)) is not above its "
                                      + "largest key in use (\(largest))", offset: nil)
        }
        return next
    }

    /// The largest primary key of `entity` in use inside `range` (one seek), nil when none is.
    private func largestKey(of entity: EntityDescription, in range: PrimaryKeyRange) throws -> UInt64? {
        guard let rows = try tx.tree(RecordTrees.rows(entity)) else { return nil }
        let cursor = rows.makeCursor()
        guard try cursor.seekBackward(KeyEncoding.primaryKey(range.upperBound - 1)) else { return nil }
        let key = try RecordTrees.primaryKey(cursor.key, at: 0, exactLength: 8, tree: RecordTrees.rows(entity))
        return range.contains(key) ? key : nil
    }

    /// Applies caller-supplied values to a row, converting and checking each.
    func assign(_ values: [String: any ValueConvertible], to row: inout [StoredValue],
                entity: EntityDescription) throws {
        for (name, given) in values {
            let i = try Self.settableField(name, of: entity)
            switch entity.fields[i].kind {
            case .toOne(let target):
                if let id = given as? ObjectID {
                    guard id.entity == model.entities[target].name else {
                        throw StrataError.validation(entity: entity.name, property: name,
                                                     reason: "expects a \(model.entities[target].name), "
                                                         + "got \(id.entity)")
                    }
                    try requireRow(RowKey(entity: target, pk: id.primaryKey))
                    row[i] = id.strataValue
                } else if given.strataValue.isNull {
                    row[i] = .null
                } else {
                    throw StrataError.validation(entity: entity.name, property: name,
                                                 reason: "a to-one relationship takes an ObjectID or nil")
                }
            default:
                // An ObjectID presents itself as an integer (its primary key), so only integers
                // need the dynamic cast, which costs more than the rest of the conversion.
                let value = given.strataValue
                if case .int = value, given is ObjectID {
                    throw StrataError.validation(entity: entity.name, property: name,
                                                 reason: "an ObjectID is not a \(entity.fields[i].type.rawValue); "
                                                     + "only a to-one relationship takes one")
                }
                row[i] = try Self.convert(value, to: entity.fields[i], entity: entity)
            }
        }
    }

    /// The field of the property `name` of `entity` that callers may set: an attribute that is
    /// stored and not derived, or a to-one relationship. Anything else is a validation error
    /// naming it.
    static func settableField(_ name: String, of entity: EntityDescription) throws -> Int {
        guard let i = entity.fieldIndex[name], entity.fields[i].kind != .auxiliary else {
            if entity.isTransient(name) {
                throw StrataError.validation(entity: entity.name, property: name,
                                             reason: "transient attributes are not stored; "
                                                 + "keep them in the object layer")
            }
            if entity.relationship(name)?.isToMany == true {
                throw StrataError.validation(entity: entity.name, property: name,
                                             reason: "a to-many relationship is changed with add(_:to:of:) and "
                                                 + "remove(_:from:of:)")
            }
            throw StrataError.validation(entity: entity.name, property: name, reason: "no such property")
        }
        if case .derived = entity.fields[i].kind {
            throw StrataError.validation(entity: entity.name, property: name,
                                         reason: "a derived attribute is computed by the store and cannot be set")
        }
        return i
    }

    /// A caller's value for an attribute, converted exactly to its type, or a validation error
    /// naming entity and attribute.
    static func convert(_ value: StoredValue, to field: Field, entity: EntityDescription) throws -> StoredValue {
        if value.isNull { return .null }
        guard let converted = field.type.coerce(value) else {
            throw StrataError.validation(entity: entity.name, property: field.name,
                                         reason: ValueDescription.whyNot(value, field.type))
        }
        return converted
    }

    /// Records a row's new state (or its deletion) and updates its fetch indexes and the inverse
    /// indexes of its to-one relationships; the row itself reaches its tree at commit
    /// (``flushRows()``). Uniqueness is settled at commit.
    func write(_ key: RowKey, _ new: [StoredValue]?, explicit: Bool = false) throws {
        let state: RowState
        if let known = rowStates[key] {
            state = known
        } else {
            rowsRead += 1
            state = RowState(original: try super.row(key))
        }
        try write(key, new, from: state, explicit: explicit)
    }

    /// ``write(_:_:explicit:)`` of the row whose state the caller just looked up or made:
    /// the table is hashed once, to store the new state. `explicit`: a caller's change of the
    /// row's own values, marked once its index entries moved.
    private func write(_ key: RowKey, _ new: [StoredValue]?, from known: RowState, explicit: Bool) throws {
        var state = known
        let old = state.current
        state.current = new
        if !state.written {
            state.written = true
            writtenKeys[key.entity].append(key)
        }
        if !state.pending {
            state.pending = true
            pendingKeys[key.entity].append(key)
        }
        needsSettle = true
        if !state.dirty {
            state.dirty = true
            dirtyKeys.append(key)
            rowsWritten += 1
        }
        let newlyExplicit = explicit && !state.explicit
        if newlyExplicit { state.explicit = true }
        rowStates[key] = state
        do {
            try updateIndexes(model.entities[key.entity], key.pk, old, new)
        } catch {
            // A write whose entries failed to move is not a change the caller made.
            if newlyExplicit { rowStates[key]?.explicit = false }
            throw error
        }
    }

    /// Sets fields of an existing row, as derivation does: in place when none of them has
    /// index or inverse entries to move (no copy of the row, no key encoded), else through
    /// ``write(_:_:)``. A row that does not exist is left alone. Generic so that one field
    /// (`CollectionOfOne`) is passed without an array made per row.
    func setFields<Changes: Collection>(_ key: RowKey, _ changes: Changes) throws
    where Changes.Element == (field: Int, value: StoredValue) {
        let entity = model.entities[key.entity]
        // One in-place access to the state: the row's array is copied at most once per
        // transaction (when it still shares storage with the row's original).
        func change(_ state: inout RowState?) -> (newlyWritten: Bool, newlyPending: Bool, newlyDirty: Bool)? {
            guard state?.current != nil else { return nil }
            state!.current!.withUnsafeMutableBufferPointer { buffer in
                for fieldChange in changes { buffer[fieldChange.field] = fieldChange.value }
            }
            defer { state!.written = true; state!.pending = true; state!.dirty = true }
            return (!state!.written, !state!.pending, !state!.dirty)
        }
        guard !changes.contains(where: { entity.fieldHasEntries[$0.field] }),
              let (newlyWritten, newlyPending, newlyDirty) = change(&rowStates[key]) else {
            guard var updated = try row(key) else { return }
            for fieldChange in changes { updated[fieldChange.field] = fieldChange.value }
            try write(key, updated)
            return
        }
        needsSettle = true
        if newlyWritten { writtenKeys[key.entity].append(key) }
        if newlyPending { pendingKeys[key.entity].append(key) }
        if newlyDirty {
            dirtyKeys.append(key)
            rowsWritten += 1
        }
    }

    /// ``setFields(_:_:)`` of one field.
    func setField(_ key: RowKey, _ field: Int, _ value: StoredValue) throws {
        try setFields(key, CollectionOfOne((field: field, value: value)))
    }

    /// Moves the row's fetch-index and inverse entries from its old values to its new ones;
    /// an index whose values did not change is not touched (nor its keys encoded).
    func updateIndexes(_ entity: EntityDescription, _ pk: UInt64, _ old: [StoredValue]?,
                       _ new: [StoredValue]?) throws {
        for (i, fields) in entity.indexFields.enumerated() {
            if let old, let new, old.count == new.count, old.withUnsafeBufferPointer({ oldBuffer in
                new.withUnsafeBufferPointer { newBuffer in
                    fields.allSatisfy { StoredValue.identical(oldBuffer, $0, newBuffer, $0) }
                }
            }) { continue }
            // Both keys are built in buffers the transaction keeps: no allocation per entry.
            oldIndexKey.removeAll(keepingCapacity: true)
            newIndexKey.removeAll(keepingCapacity: true)
            if let old { KeyEncoding.appendIndexKey(of: old, fields: fields, pk: pk, to: &oldIndexKey) }
            if let new { KeyEncoding.appendIndexKey(of: new, fields: fields, pk: pk, to: &newIndexKey) }
            if (old == nil) == (new == nil) && oldIndexKey == newIndexKey { continue }
            let tree = try trees.index(entity, i)
            if old != nil { _ = try oldIndexKey.withUnsafeBytes { try tree.delete($0) } }
            if new != nil { try newIndexKey.withUnsafeBytes { try tree.put($0, UnsafeRawBufferPointer(start: nil, count: 0)) } }
        }
        for (i, fields) in entity.fullTextFields.enumerated() {
            if let old, let new, old.count == new.count, old.withUnsafeBufferPointer({ oldBuffer in
                new.withUnsafeBufferPointer { newBuffer in
                    fields.allSatisfy { StoredValue.identical(oldBuffer, $0, newBuffer, $0) }
                }
            }) { continue }
            if pendingWords[entity.index].isEmpty {
                pendingWords[entity.index] = entity.fullTextFields.map { PendingWords(fieldCount: $0.count) }
            }
            pendingWords[entity.index][i].changeRow(pk, old: old, new: new, fields: fields, vocabulary: wordVocabulary())
            hasPendingWords = true
        }
        for (field, _) in entity.toOneFields {
            let oldTarget = old?[field], newTarget = new?[field]
            if oldTarget == newTarget { continue }
            let tree = try trees.inverse(entity, field)
            if case .int(let target)? = oldTarget {
                _ = try RecordTrees.withPair(UInt64(bitPattern: target), pk) { try tree.delete($0) }
            }
            if case .int(let target)? = newTarget {
                try RecordTrees.withPair(UInt64(bitPattern: target), pk) { try tree.put($0, UnsafeRawBufferPointer(start: nil, count: 0)) }
            }
        }
    }

    /// The transaction's word vocabulary, taken from the store's pool at the first use.
    private func wordVocabulary() -> WordVocabulary {
        if let vocabulary { return vocabulary }
        let taken = vocabularies?.take() ?? WordVocabulary()
        vocabulary = taken
        return taken
    }

    /// Gives the word vocabulary back to the store's pool (the transaction has ended).
    func returnVocabulary() {
        if let vocabulary { vocabularies?.give(vocabulary) }
        vocabulary = nil
    }

    /// Writes the word index postings changed since the last flush: as the next batch of the
    /// index's recent changes (its id this transaction's ID and the flush's number,
    /// ``WordChanges/batchID(transaction:flush:)``), or, when the index would then hold
    /// ``WordChanges/batchesBeforeMerge`` batches or the flush changes more than
    /// ``WordChanges/largestBatch`` postings, merged with every batch into the blocks (decision
    /// 96). An index whose write threw (a damaged entry) keeps its changes: writing them again
    /// gives the same postings, so a later flush or the commit still writes them.
    func flushWords() throws {
        guard hasPendingWords else { return }
        let batchID = WordChanges.batchID(transaction: tx.transactionID, flush: wordFlushes)
        wordFlushes += 1
        for entity in model.entities where !pendingWords[entity.index].isEmpty {
            for i in pendingWords[entity.index].indices where !pendingWords[entity.index][i].isEmpty {
                let tree = try trees.words(entity, i), name = RecordTrees.words(entity, i)
                let ids = try WordChanges.batchIDs(tree.makeCursor(), tree: name)
                if let batchID, ids.count + 1 < WordChanges.batchesBeforeMerge, ids.last.map({ $0 < batchID }) ?? true,
                   pendingWords[entity.index][i].changeCount <= WordChanges.largestBatch {
                    let batch = try pendingWords[entity.index][i].writeBatch(batchID, to: tree, vocabulary: wordVocabulary())
                    writtenBatches.append((name, batchID, batch))
                } else if ids.isEmpty {
                    try pendingWords[entity.index][i].apply(to: tree, name: name, vocabulary: wordVocabulary())
                } else {
                    // The batches (as this transaction wrote them, as the store keeps them, or
                    // read back) merged with these changes, their entries deleted.
                    let fieldCount = entity.fullTextFields[i].count
                    var batches: [WordChanges.Decoded] = []
                    for id in ids {
                        if let own = writtenBatches.first(where: { $0.tree == name && $0.id == id }) {
                            batches.append(own.batch)
                        } else if WordChanges.transaction(ofBatch: id) != tx.transactionID,
                                  let kept = wordBatches?.batch(tree: name, id: id) {
                            batches.append(kept)
                        } else {
                            batches.append(try WordChanges.Decoded.read(batch: id, tree.makeCursor(), name: name, fieldCount: fieldCount))
                        }
                    }
                    // The entries go only once the blocks hold their changes: a merge that
                    // threw (a damaged block) leaves them, and applying them again later gives
                    // the same postings.
                    try pendingWords[entity.index][i].apply(after: batches, to: tree, name: name, vocabulary: wordVocabulary())
                    for key in try WordChanges.entryKeys(tree.makeCursor(), tree: name) {
                        _ = try key.withUnsafeBytes { try tree.delete($0) }
                    }
                    writtenBatches.removeAll { $0.tree == name }
                    mergedBatches[name] = max(mergedBatches[name] ?? 0, ids.last ?? 0)
                }
            }
        }
        hasPendingWords = false
    }

}

/// The primary-key counters a transaction moved, by entity index: an array (a model has few
/// entities), not a dictionary hashed twice per insert. Iterates the moved counters in entity
/// order.
struct KeyCounters: Sequence {
    private var next: [UInt64?]

    init(entities: Int) { next = Array(repeating: nil, count: entities) }

    /// The next key of the entity at `index`, once this transaction moved or read its counter.
    subscript(index: Int) -> UInt64? {
        get { index < next.count ? next[index] : nil }
        set {
            if index >= next.count { next += Array(repeating: nil, count: index + 1 - next.count) }
            next[index] = newValue
        }
    }

    /// Whether no counter was read or moved.
    var isEmpty: Bool { !next.contains { $0 != nil } }

    func makeIterator() -> some IteratorProtocol<(Int, UInt64)> {
        next.enumerated().lazy.compactMap { i, counter in counter.map { (i, $0) } }.makeIterator()
    }
}
