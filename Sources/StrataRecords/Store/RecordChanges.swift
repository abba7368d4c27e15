import StrataStorage

/// What one committed write transaction changed, row by row: the object layer's did-save
/// report. Derived values the commit moved count as changes of their rows, so a row whose
/// `itemCount` moved because an item was added is listed as updated with `itemCount`.
public struct RecordChanges: Sendable {
    /// One changed row.
    public struct Row: Sendable {
        /// The object.
        public var id: ObjectID
        /// The row as committed, slots as ``EntityDescription/rowFieldIndex(of:)`` says;
        /// `nil` for a deleted object.
        public var values: [StoredValue]?
        /// The row as it was before the transaction; `nil` for an inserted object.
        public var previous: [StoredValue]?
        /// The slots whose values changed (every slot for an inserted or deleted object).
        public var changedFields: [Int]

        /// A changed row (the object layer makes them for a history transaction it merges).
        package init(id: ObjectID, values: [StoredValue]?, previous: [StoredValue]?, changedFields: [Int]) {
            self.id = id
            self.values = values
            self.previous = previous
            self.changedFields = changedFields
        }
    }

    /// One many-to-many link made or broken, seen from one side (each link is listed from
    /// both sides).
    public struct Link: Sendable {
        /// The object whose relationship changed.
        public var id: ObjectID
        /// The relationship of `id`'s entity.
        public var relationship: String
        /// The object on the other side.
        public var other: ObjectID
        /// Made (`true`) or broken.
        public var added: Bool

        /// A link made or broken (the object layer makes them for a history transaction it merges).
        package init(id: ObjectID, relationship: String, other: ObjectID, added: Bool) {
            self.id = id
            self.relationship = relationship
            self.other = other
            self.added = added
        }
    }

    /// The id of the transaction that committed the changes.
    public var transactionID: UInt64
    /// Inserted rows.
    public var inserted: [Row] = []
    /// Updated rows (stored, to-one or derived slots moved).
    public var updated: [Row] = []
    /// Deleted rows (cascades included).
    public var deleted: [Row] = []
    /// Many-to-many links made or broken.
    public var links: [Link] = []

    /// An empty change set of the transaction `transactionID`.
    package init(transactionID: UInt64) { self.transactionID = transactionID }
}

extension RecordTransaction {
    /// The change set of this transaction after it settled: every written row, compared with
    /// the row it began as.
    func changes() -> RecordChanges {
        var out = RecordChanges(transactionID: tx.transactionID)
        // Every slot of an inserted or deleted row: one array per row length, shared.
        var allFields: [[Int]] = []
        func every(_ count: Int) -> [Int] {
            while allFields.count <= count { allFields.append(Array(0..<allFields.count)) }
            return allFields[count]
        }
        var scratch: [Int] = []
        var lastChanged: [Int] = []
        // Rows a change by predicate rewrote or deleted from their bytes hold no state unless
        // written since; `writtenKeys` lists them at each such write (taken at the first). The
        // first rewrite's old bytes are the row as the transaction found it; the row as it is is
        // its state's, if it has one, or the last rewrite's new bytes.
        var rewritten: [RowKey: (first: Int, last: Int)] = [:]
        for (i, entry) in rewrittenRows.entries.enumerated() {
            rewritten[entry.key, default: (i, i)].last = i
        }
        var listed = Set<RowKey>()
        for keys in writtenKeys {
            for key in keys {
                if writtenKeysRepeat && !listed.insert(key).inserted { continue }
                let original: [StoredValue]?, current: [StoredValue]?
                if !rewrittenRows.isEmpty, let (first, last) = rewritten.removeValue(forKey: key) {
                    let entity = model.entities[key.entity]
                    guard let was = rewrittenRows.row(rewrittenRows.entries[first].old, entity) else { continue }
                    original = was
                    if let state = rowStates[key] {
                        current = state.current
                    } else if let newBytes = rewrittenRows.entries[last].new {
                        guard let now = rewrittenRows.row(newBytes, entity) else { continue }
                        current = now
                    } else {
                        current = nil
                    }
                } else {
                    guard let state = rowStates[key] else { continue }
                    original = state.original
                    current = state.current
                }
                let id = objectID(key)
                switch (original, current) {
                case (nil, nil): continue  // inserted and deleted again
                case (nil, let now?):
                    out.inserted.append(.init(id: id, values: now, previous: nil, changedFields: every(now.count)))
                case (let was?, nil):
                    out.deleted.append(.init(id: id, values: nil, previous: was, changedFields: every(was.count)))
                case (let was?, let now?):
                    // Rows of one entity have one length; compared in place, from their bits,
                    // into a scratch list: rows that changed the same fields as the row before
                    // (most of an update's) share that row's array, one allocation per pattern.
                    scratch.removeAll(keepingCapacity: true)
                    if now.count == was.count {
                        now.withUnsafeBufferPointer { nowBuffer in
                            was.withUnsafeBufferPointer { wasBuffer in
                                for field in nowBuffer.indices where !StoredValue.identical(nowBuffer, field, wasBuffer, field) {
                                    scratch.append(field)
                                }
                            }
                        }
                    } else {
                        for field in now.indices where !now[field].isIdentical(to: was[field]) { scratch.append(field) }
                    }
                    if !scratch.isEmpty {
                        if scratch != lastChanged { lastChanged = scratch }
                        out.updated.append(.init(id: id, values: now, previous: was, changedFields: lastChanged))
                    }
                }
            }
        }
        for link in linkChanges {
            let entity = model.entities[link.entity]
            guard let rel = entity.relationship(link.relationship) else { continue }
            out.links.append(.init(id: ObjectID(entity: entity.name, primaryKey: link.row),
                                   relationship: link.relationship,
                                   other: ObjectID(entity: rel.target, primaryKey: link.other), added: link.added))
        }
        return out
    }
}

extension RecordStore {
    /// Runs `body` in the write transaction as ``write(_:)-2573y`` does, and also
    /// returns what the commit changed (derived values and cascades included).
    public func writeReportingChanges<T>(_ body: (RecordTransaction) throws -> T) throws
        -> (result: T, changes: RecordChanges) {
        var changes: RecordChanges?
        let result = try write(body, prepared: { changes = $0.committedChanges ?? $0.changes() })
        return (result, changes!)
    }
}
