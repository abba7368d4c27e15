import StrataStorage

/// Reads objects in one consistent state: a snapshot (``RecordStore/read(_:)``) or a write
/// transaction's own view (``RecordTransaction`` inherits from it).
///
/// A reader lives for the closure it was given to: kept and used after that closure returned
/// or threw, every method throws `StrataError.closed`.
public class RecordReader {
    /// The model the objects are read with.
    public let model: Model
    let source: TreeSource
    /// False once the closure that received this reader has ended.
    var isOpen = true
    /// A snapshot's cursors kept between fetches, by tree: making one (a tree lookup by name,
    /// an allocation, its path array) cost more than the seek it serves. Borrowed and given
    /// back, so a nested fetch on the same tree gets its own. Write transactions make theirs
    /// afresh (their trees come and go).
    /// The last one given back waits in ``lastIdleCursor`` (a run of lookups on one index
    /// takes and returns it with no array operation); a few more here, searched linearly from
    /// the last given back: comparing a tree's name with the same string is cheaper than
    /// hashing it. Unchecked exclusivity: only `borrowCursor(_:)` and `giveBack(_:tree:)`
    /// touch these, and call nothing that does.
    @exclusivity(unchecked) private var idleCursors: [(tree: String, cursor: Cursor)] = []
    /// The cursor given back last, on ``lastIdleTree``.
    @exclusivity(unchecked) private var lastIdleCursor: Cursor?
    @exclusivity(unchecked) private var lastIdleTree = ""
    /// A snapshot's cursor on each entity's rows tree, by entity index, for point reads (a
    /// stored row, a fault): kept between reads, so that reads in key order find their rows in
    /// the leaf the last one rested on instead of descending from the root (``Cursor`` seeks
    /// within its leaf first), and no read looks its tree up by name. Unchecked exclusivity:
    /// only `rowCursor(_:)` touches it, with a plain load or store.
    @exclusivity(unchecked) private var rowCursors: [Cursor?] = []
    /// The entity the last name lookup found: readers mostly ask for one entity many times,
    /// and comparing a name with the same (usually small) string is cheaper than hashing it.
    @exclusivity(unchecked) private var lastEntity: EntityDescription?
    /// The key a prepared lookup makes from its value (``PreparedFetch/IndexLookup``), made in
    /// place run after run: a fresh array per run was an allocation and a free, a tenth of a
    /// lookup by equality. Unchecked exclusivity: only a prepared fetch's run touches it, and
    /// the range it lends holds the buffer until the run ends (the next run finds it unshared).
    @exclusivity(unchecked) var lookupKey: [UInt8] = []
    /// The store's decoded batches of recent word changes, shared by its readers (nil: a
    /// reader outside a ``RecordStore``, which decodes what it meets).
    var wordBatches: WordBatchCache?
    /// A snapshot's word indexes' batch ids, by tree: found once per tree, since the snapshot
    /// does not change (a write transaction reads them afresh).
    var batchIDs: [String: [UInt64]] = [:]

    init(model: Model, source: TreeSource) {
        self.model = model
        self.source = source
    }

    /// Throws `closed` once the reader's closure has ended: its storage transaction is gone.
    func checkOpen() throws {
        guard isOpen else {
            throw StrataError.closed(self is RecordTransaction
                                        ? "record transaction (used after its write closure ended)"
                                        : "record reader (used after its read closure ended)")
        }
    }

    /// Called at the start of every public read (a transaction settles here).
    func willRead() throws { try checkOpen() }

    /// Every entry point resolves an entity name or an object identifier through here, so
    /// none works on a reader whose closure ended.
    func entity(_ name: String) throws -> EntityDescription {
        try checkOpen()
        if let last = lastEntity, last.name == name { return last }
        guard let found = model.entity(name) else {
            throw StrataError.invalidArgument("no entity '\(name)' in the model")
        }
        lastEntity = found
        return found
    }

    func rowKey(_ id: ObjectID) throws -> RowKey { RowKey(entity: try entity(id.entity).index, pk: id.primaryKey) }

    func objectID(_ key: RowKey) -> ObjectID { ObjectID(entity: model.entities[key.entity].name, primaryKey: key.pk) }

    /// Called before reading a rows tree as a whole (a transaction first settles and writes its
    /// pending rows).
    func willScanRows() throws { try willRead() }

    /// The row's stored fields, or nil when there is no such row.
    func row(_ key: RowKey) throws -> [StoredValue]? {
        let entity = model.entities[key.entity]
        return try withStoredRow(entity, key.pk) { try RowCodec.decode($0, fields: entity.fields) }
    }

    /// Calls `body` with the stored bytes of `entity`'s row `pk`, borrowed (valid only inside `body`,
    /// which must not read another row of `entity` through this reader: a snapshot reads with the
    /// entity's one row cursor), and returns its result; nil when there is no such row.
    func withStoredRow<R>(_ entity: EntityDescription, _ pk: UInt64,
                          _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let stored = pk.bigEndian
        return try withUnsafeBytes(of: stored) { keyBytes in
            guard case .read = source else { return try pointReadTree(entity)?.withValueBytes(forKey: keyBytes, body) }
            guard let cursor = try rowCursor(entity), try cursor.seek(keyBytes) else { return nil }
            let found = cursor.key
            guard found.count == 8, found.loadBigEndianUInt64() == pk else { return nil }
            return try body(cursor.value)
        }
    }

    /// A reader over a write transaction: `entity`'s rows tree for a point read (nil: there is
    /// none yet). A record transaction keeps the trees it found; a plain reader (a migration
    /// reading the old rows before it drops their trees) looks the tree up each time.
    func pointReadTree(_ entity: EntityDescription) throws -> WriteTree? {
        guard case .write(let tx) = source else { return nil }
        return try tx.tree(RecordTrees.rows(entity))
    }

    /// The snapshot's cursor on `entity`'s rows (nil: the store has no rows tree for it yet).
    private func rowCursor(_ entity: EntityDescription) throws -> Cursor? {
        if entity.index < rowCursors.count, let cursor = rowCursors[entity.index] { return cursor }
        guard let cursor = try source.cursor(RecordTrees.rows(entity)) else { return nil }
        if rowCursors.count <= entity.index {
            rowCursors += Array(repeating: nil, count: entity.index + 1 - rowCursors.count)
        }
        rowCursors[entity.index] = cursor
        return cursor
    }

    /// The row whose stored bytes a scan of its rows tree is positioned on: decoded from them
    /// (a transaction answers from its own changes first).
    func row(_ key: RowKey, stored: UnsafeRawBufferPointer) throws -> [StoredValue]? {
        try RowCodec.decode(stored, fields: model.entities[key.entity].fields)
    }

    /// As ``row(_:stored:)``, decoding only the fields `needed` marks (nil: all); the others
    /// read as `.null`. For a scan's predicate and sort, not for values a caller gets.
    func row(_ key: RowKey, stored: UnsafeRawBufferPointer, needed: [Bool]?) throws -> [StoredValue]? {
        guard let needed else { return try row(key, stored: stored) }
        return try RowCodec.decode(stored, fields: model.entities[key.entity].fields, needed: needed)
    }

    /// Whether the object exists.
    public func exists(_ id: ObjectID) throws -> Bool {
        try willRead()
        return try row(rowKey(id)) != nil
    }

    /// Every stored attribute and derived attribute of the object (not relationships), or nil
    /// when it does not exist.
    public func values(of id: ObjectID) throws -> [String: StoredValue]? {
        try willRead()
        let key = try rowKey(id)
        guard let stored = try row(key) else { return nil }
        let entity = model.entities[key.entity]
        var out: [String: StoredValue] = [:]
        for (i, field) in entity.fields.enumerated() where field.kind == .attribute || field.kind == .derived {
            out[field.name] = stored[i]
        }
        return out
    }

    /// Every slot of the object's stored row, positioned as ``EntityDescription/rowFieldIndex(of:)``
    /// says (to-one relationships: the target's primary key as an `int`; auxiliary slots hold
    /// bookkeeping), or nil when the object does not exist. One read, no dictionary: the object
    /// layer fills its objects from this.
    public func storedRow(of id: ObjectID) throws -> [StoredValue]? {
        try willRead()
        return try row(rowKey(id))
    }

    /// ``storedRow(of:)`` by entity index and primary key: the object layer reads the rows of
    /// its faults, and its save those of the objects it updates (optimistic locking), by the keys
    /// it holds, with no entity name to look up per row. Nil for an index outside the model.
    package func storedRow(entityIndex: Int, primaryKey pk: UInt64) throws -> [StoredValue]? {
        try willRead()
        guard model.entities.indices.contains(entityIndex) else { return nil }
        return try row(RowKey(entity: entityIndex, pk: pk))
    }

    /// The stored rows of many objects of `entity` at once (as ``storedRow(of:)`` gives each;
    /// nil for a key with no object), in the order of `primaryKeys`: the entity is resolved and
    /// the reader checked once, for batch faulting and prefetching.
    public func storedRows(of entity: String, primaryKeys: [UInt64]) throws -> [[StoredValue]?] {
        try willRead()
        let entityDescription = try self.entity(entity)
        return try primaryKeys.map { try row(RowKey(entity: entityDescription.index, pk: $0)) }
    }

    /// One attribute or derived attribute (to-one relationships: the target's primary key).
    public func value(_ property: String, of id: ObjectID) throws -> StoredValue {
        try willRead()
        let key = try rowKey(id)
        let entity = model.entities[key.entity]
        guard let field = entity.fieldIndex[property], entity.fields[field].kind != .auxiliary else {
            if entity.isTransient(property) {
                throw StrataError.invalidFetch("'\(property)' of \(entity.name) is transient: it is never stored")
            }
            throw StrataError.invalidArgument("\(entity.name) has no stored property '\(property)'")
        }
        guard let stored = try row(key) else {
            throw StrataError.objectNotFound(entity: entity.name, primaryKey: id.primaryKey)
        }
        return stored[field]
    }

    /// The target of a to-one relationship.
    public func target(of relationship: String, of id: ObjectID) throws -> ObjectID? {
        try willRead()
        let key = try rowKey(id)
        let entity = model.entities[key.entity]
        guard let rel = entity.relationship(relationship), let field = rel.field else {
            throw StrataError.invalidArgument("'\(relationship)' is not a to-one relationship of \(entity.name)")
        }
        guard let stored = try row(key) else {
            throw StrataError.objectNotFound(entity: entity.name, primaryKey: id.primaryKey)
        }
        guard case .int(let pk) = stored[field] else { return nil }
        return ObjectID(entity: rel.target, primaryKey: UInt64(bitPattern: pk))
    }

    /// The objects of a to-many relationship, in primary-key order.
    public func members(of relationship: String, of id: ObjectID) throws -> [ObjectID] {
        try willRead()
        let key = try rowKey(id)
        let entity = model.entities[key.entity]
        guard let rel = entity.relationship(relationship), rel.isToMany else {
            throw StrataError.invalidArgument("'\(relationship)' is not a to-many relationship of \(entity.name)")
        }
        return try memberKeys(rel, of: key).map { ObjectID(entity: rel.target, primaryKey: $0) }
    }

    /// ``members(of:of:)`` of the object of entity `entityIndex` with primary key `pk`, as
    /// primary keys: the object layer holds keys, not identifiers, and an `ObjectID` per member
    /// was made only to be taken apart again. Empty for an index outside the model.
    package func memberPrimaryKeys(of relationship: String, entityIndex: Int,
                                   primaryKey pk: UInt64) throws -> [UInt64] {
        try willRead()
        guard model.entities.indices.contains(entityIndex) else { return [] }
        let entity = model.entities[entityIndex]
        guard let rel = entity.relationship(relationship), rel.isToMany else {
            throw StrataError.invalidArgument("'\(relationship)' is not a to-many relationship of \(entity.name)")
        }
        return try memberKeys(rel, of: RowKey(entity: entityIndex, pk: pk))
    }

    /// Primary keys of the objects a to-many relationship of `key` reaches.
    func memberKeys(_ rel: ResolvedRelationship, of key: RowKey) throws -> [UInt64] {
        let target = model.entities[rel.targetIndex]
        if let field = rel.inverseField {
            return try source.keys(RecordTrees.inverse(target, field), prefix: KeyEncoding.primaryKey(key.pk))
        }
        return try source.keys(RecordTrees.join(model.entities[key.entity], rel.name),
                               prefix: KeyEncoding.primaryKey(key.pk))
    }

    /// How many objects of `entity` exist.
    public func count(_ entity: String) throws -> Int {
        try willScanRows()
        return try source.count(RecordTrees.rows(self.entity(entity)))
    }

    /// Every object of `entity`, in primary-key order.
    public func objects(_ entity: String) throws -> [ObjectID] {
        let entityDescription = try self.entity(entity)
        try willScanRows()
        return try source.keys(RecordTrees.rows(entityDescription), prefix: []).map {
            ObjectID(entity: entityDescription.name, primaryKey: $0)
        }
    }
}

extension RecordReader {
    /// A cursor on `tree` (nil: no such tree), to give back with ``giveBack(_:tree:)``.
    func borrowCursor(_ tree: String) throws -> Cursor? {
        guard case .read = source else { return try source.cursor(tree) }
        if lastIdleCursor != nil, lastIdleTree == tree {
            defer { lastIdleCursor = nil }
            return lastIdleCursor
        }
        if let i = idleCursors.lastIndex(where: { $0.tree == tree }) {
            // The last one given back is the usual find: removing it moves nothing (and the
            // array's general `remove(at:)` cost more than its `removeLast`).
            return i == idleCursors.count - 1 ? idleCursors.removeLast().cursor : idleCursors.remove(at: i).cursor
        }
        return try source.cursor(tree)
    }

    func giveBack(_ cursor: Cursor, tree: String) {
        guard case .read = source else { return }
        if let previous = lastIdleCursor {
            if idleCursors.count == 4 { idleCursors.removeFirst() }
            idleCursors.append((lastIdleTree, previous))
        }
        lastIdleCursor = cursor
        lastIdleTree = tree
    }
}
