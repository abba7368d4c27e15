import StrataStorage

/// The storage trees of the record layer (FORMAT.md, "Records"). Named after the model so
/// `strata info` and `strata dump` read naturally.
enum RecordTrees {
    /// The stored model and the primary-key counters.
    static let meta = "records:meta"
    static let schemaKey = Array("schema".utf8)

    static func nextKey(_ entity: EntityDescription) -> [UInt8] { Array("next:\(entity.name)".utf8) }

    /// In `meta`: the ``Model/version`` of the stored model (8 bytes big-endian; absent: 1).
    static let modelVersionKey = Array("version".utf8)

    /// Records `version` as the stored model's.
    static func putModelVersion(_ version: Int, in meta: WriteTree) throws {
        try meta.put(modelVersionKey, KeyEncoding.primaryKey(UInt64(version)))
    }

    /// The stored model's version from its entry's value: nil when the entry is absent (a store written
    /// before versions, holding version 1), `corrupt` when it is not 8 bytes or out of range.
    static func storedModelVersion(_ value: [UInt8]?) throws -> Int? {
        guard let value else { return nil }
        guard value.count == 8 else {
            throw StrataError.corrupt("\(meta): the model version entry is \(value.count) bytes, not 8", offset: nil)
        }
        let version = value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard version >= 1, version <= UInt64(Int.max) else {
            throw StrataError.corrupt("\(meta): the model version entry is \(version), not a version", offset: nil)
        }
        return Int(version)
    }

    /// Persistent history (FORMAT.md §12, "History"): token (8 bytes big-endian) → entry.
    static let history = "records:history"
    /// In `meta`: present (one byte, 1) while the store records history.
    static let historyOnKey = Array("history".utf8)
    /// In `meta`: the token the next recorded transaction gets (8 bytes big-endian).
    static let historyNextKey = Array("history:next".utf8)
    /// In `meta`: every token up to this one is gone, purged or never recorded (8 bytes big-endian).
    static let historyPurgedKey = Array("history:purged".utf8)

    /// Rows: primary key (8 bytes big-endian) → row.
    static func rows(_ entity: EntityDescription) -> String { entity.treeNames.rows }
    /// A fetch index: encoded values + primary key → empty.
    static func index(_ entity: EntityDescription, _ i: Int) -> String { entity.treeNames.indexes[i] }
    /// A uniqueness constraint: encoded values → primary key.
    static func unique(_ entity: EntityDescription, _ i: Int) -> String { entity.treeNames.unique[i] }
    /// The to-many side of a to-one: target key + row key → empty ("which rows point at X").
    static func inverse(_ entity: EntityDescription, _ field: Int) -> String { entity.treeNames.inverses[field] }
    /// One side of a many-to-many: this row's key + the other row's key → empty.
    static func join(_ entity: EntityDescription, _ relationship: String) -> String {
        "join:\(entity.name):\(relationship)"
    }
    /// `@min`/`@max` bookkeeping: parent key + encoded child value + child key → empty.
    static func extremes(_ entity: EntityDescription, _ derived: String) -> String {
        "extremes:\(entity.name):\(derived)"
    }

    /// The prefixes of the trees that hold an entity's data (every record tree but `meta`).
    static let dataTreePrefixes = ["rows:", "index:", "unique:", "inverse:", "join:", "extremes:", "words:"]

    static func words(_ entity: EntityDescription, _ i: Int) -> String { entity.treeNames.words[i] }

    /// Whether `name` is one of the record layer's trees (by its prefix).
    static func isRecordTreeName(_ name: String) -> Bool {
        name == meta || name == history || dataTreePrefixes.contains { name.hasPrefix($0) }
    }

    static func pair(_ first: UInt64, _ second: UInt64) -> [UInt8] {
        KeyEncoding.primaryKey(first) + KeyEncoding.primaryKey(second)
    }

    /// The key of a `@min`/`@max` bookkeeping entry: the parent's key, the child's value as a
    /// key value, the child's key. One definition for the engine that writes the entries and
    /// the checker that recomputes them.
    static func extremesKey(parent: UInt64, value: StoredValue, child: UInt64) -> [UInt8] {
        var key = KeyEncoding.primaryKey(parent)
        KeyEncoding.append(value, to: &key)
        return key + KeyEncoding.primaryKey(child)
    }

    /// The key of a uniqueness entry for the constrained `values`, or nil when one of them is
    /// nil (nils never clash); `whole` is false when a value was cut at
    /// ``KeyEncoding/maxValueBytes`` (a commit refuses such a value). One definition for the
    /// commit that writes the entries and the checker that recomputes them.
    static func uniqueKey(_ values: [StoredValue]) -> (key: [UInt8], whole: Bool)? {
        if values.contains(where: \.isNull) { return nil }
        var out: [UInt8] = []
        var whole = true
        for value in values {
            if !KeyEncoding.append(value, to: &out) { whole = false }
        }
        return (out, whole)
    }

    /// The primary key in the last 8 bytes of a key read from `tree`, which must be at least
    /// `minimumLength` bytes long: a shorter key (a damaged or forged file) throws `corrupt`
    /// instead of reading outside the key.
    static func trailingPrimaryKey(_ key: UnsafeRawBufferPointer, minimumLength: Int, tree: String) throws -> UInt64 {
        guard key.count >= max(minimumLength, 8) else {
            throw StrataError.corrupt(
                "a key of \(tree) is \(key.count) bytes, shorter than the \(max(minimumLength, 8)) it must hold",
                offset: nil)
        }
        return KeyEncoding.decodePrimaryKey(UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...]))
    }

    /// The primary key at bytes `offset..<offset + 8` of a key read from `tree` (`exactLength`:
    /// the key must be exactly that long), or `corrupt`.
    static func primaryKey(_ key: UnsafeRawBufferPointer, at offset: Int, exactLength: Int? = nil,
                           tree: String) throws -> UInt64 {
        guard offset >= 0, key.count >= offset + 8, exactLength.map({ key.count == $0 }) ?? true else {
            throw StrataError.corrupt(
                "a key of \(tree) is \(key.count) bytes, not the \(exactLength ?? offset + 8) it must hold",
                offset: nil)
        }
        // Read in place: the generic byte loop cost as much as a cursor's step per key walked.
        return key.loadBigEndianUInt64(at: offset)
    }

    /// A stored primary key (a unique tree's value, a `next:` counter): exactly 8 bytes, or `corrupt`.
    static func storedPrimaryKey(_ value: [UInt8], tree: String) throws -> UInt64 {
        guard value.count == 8 else {
            throw StrataError.corrupt("a primary key in \(tree) is \(value.count) bytes, not 8", offset: nil)
        }
        return KeyEncoding.decodePrimaryKey(value)
    }
}
