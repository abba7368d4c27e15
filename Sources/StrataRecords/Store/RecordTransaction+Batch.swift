/// Changes by predicate: one call updates or deletes every object a fetch request matches, reading
/// keys only — no values are decoded for the caller — with everything a change one object at a time
/// gets: derived values moved incrementally at commit (a cost proportional to what changed), delete
/// rules (a `deny` refuses the whole transaction at commit), uniqueness checked at commit, and the
/// history recorded.
extension RecordTransaction {
    /// Sets `values` (attributes and to-one relationships, as ``update(_:_:)`` takes them) on
    /// every object that `request` matches (its sort, limit and offset included), and returns
    /// how many it changed.
    ///
    /// The names and values are checked before anything is read, so a bad one is refused even
    /// when nothing matches.
    ///
    /// - Throws: `StrataError` — `invalidArgument` or `validation` for a name or value the
    ///   entity does not take, the fetch's errors for the request.
    @discardableResult
    public func updateAll(_ request: FetchRequest, set values: [String: any ValueConvertible]) throws -> Int {
        let entity = try self.entity(request.entity)
        // Converted and checked once (a to-one's target too: nothing here deletes it); each
        // row then takes the converted values.
        var converted = [StoredValue](repeating: .null, count: entity.fields.count)
        try assign(values, to: &converted, entity: entity)
        let assigned = try values.keys.map { try Self.settableField($0, of: entity) }
        let (keys, scanned) = try fetchKeysAndRows(request, entity)
        func setAssigned(_ row: inout [StoredValue]) {
            for field in assigned { row[field] = converted[field] }
        }
        // Rows the scan kept are rewritten from their bytes where the plan can (no state, put at
        // once); the rest, and rows the scan did not keep, go the general way.
        var plan = scanned == nil ? nil : RowRewrite(entity, setting: assigned, to: converted, model: model)
        // The sums moved so far wait for the next settle even when a later row throws, as the
        // rows written so far do.
        defer { if let plan { keepSums(plan) } }
        for (i, key) in keys.enumerated() {
            let kept: Bool? = try scanned?.withRow(at: i) { stored in
                if plan != nil, try rewriteFromBytes(key, stored, &plan!) { return true }
                try rewriteScannedRow(key, stored: stored, setAssigned)
                return true
            }
            if kept == nil { try rewriteRow(key, setAssigned) }
        }
        return keys.count
    }

    /// Rewrites the row `key` from its scanned bytes `stored` by `plan` and puts it; false,
    /// nothing done, when it must go the general way.
    private func rewriteFromBytes(_ key: RowKey, _ stored: UnsafeRawBufferPointer, _ plan: inout RowRewrite) throws
        -> Bool {
        guard rowStates[key] == nil else { return false }
        var same = false
        guard plan.rewrite(stored, same: &same) else { return false }
        rowsRead += 1
        // Written, as the general path counts it, even when nothing changes: the change set
        // lists rows in the order of their first write.
        noteWrittenFromBytes(key)
        if same { return true }
        let new = plan.newRow
        try withUnsafeBytes(of: key.pk.bigEndian) { pk in
            try new.withUnsafeBytes { try trees.rows(plan.entity).put(pk, $0) }
        }
        noteRewritten(key, old: stored, new: new)
        return true
    }

    /// Deletes the row `key` from its scanned bytes `stored` by `plan`: the row, then its index
    /// and inverse entries; whether it was there to delete, or nil, nothing done, when it must
    /// go the general way.
    private func deleteFromBytes(_ key: RowKey, _ stored: UnsafeRawBufferPointer, _ plan: inout RowRewrite) throws
        -> Bool? {
        guard rowStates[key] == nil, plan.readForRemoval(stored) else { return nil }
        rowsRead += 1
        guard try withUnsafeBytes(of: key.pk.bigEndian, { try trees.rows(plan.entity).delete($0) }) else { return false }
        try updateIndexes(plan.entity, key.pk, plan.readValues, nil)
        plan.takeRemoval()
        noteWrittenFromBytes(key)
        noteRewritten(key, old: stored, new: nil)
        return true
    }

    /// Records the bytes of a row changed from its bytes for the change set (the caller listed
    /// it as written).
    private func noteRewritten(_ key: RowKey, old: UnsafeRawBufferPointer, new: [UInt8]?) {
        rewrittenRows.append(key, old: old, new: new)
        rowsWritten += 1
    }

    /// Lists a row written from its bytes in ``writtenKeys``, where the change set finds it in
    /// the order of first writes the general path keeps (a later write lists it again).
    private func noteWrittenFromBytes(_ key: RowKey) {
        writtenKeys[key.entity].append(key)
        writtenKeysRepeat = true
    }

    /// Keeps the `@count` and `@sum` deltas of the rows `plan` rewrote or deleted for the next
    /// settle, which applies them with the deltas of the rows it derives from (once per parent,
    /// as if each row had been changed one at a time).
    private func keepSums(_ plan: RowRewrite) {
        for sum in plan.sums where !sum.deltas.isEmpty {
            rewrittenSums[RewrittenSumKey(entity: sum.parent, field: sum.field), default: ParentDeltas(width: 1)]
                .merge(sum.deltas, into: 0)
            needsSettle = true
        }
    }

    /// Deletes every object that `request` matches (its sort, limit and offset included), with
    /// their delete rules, and returns how many it deleted (objects a rule then deleted are not
    /// counted). A `deny` rule that one of them breaks fails the commit: nothing is deleted.
    ///
    /// - Throws: `StrataError`: the fetch's errors for the request.
    @discardableResult
    public func deleteAll(_ request: FetchRequest) throws -> Int {
        let entity = try self.entity(request.entity)
        var deleted = 0
        let (keys, scanned) = try fetchKeysAndRows(request, entity)
        // Rows the scan kept are deleted from their bytes where the plan can, as `updateAll`
        // rewrites them; the rest go the general way.
        var plan = scanned == nil ? nil : RowRewrite(deleting: entity, model: model)
        defer { if let plan { keepSums(plan) } }
        for (i, key) in keys.enumerated() {
            // A cascade from one deleted before may already have taken it.
            let kept: Bool? = try scanned?.withRow(at: i) { stored in
                if plan != nil, let deletedFromBytes = try deleteFromBytes(key, stored, &plan!) { return deletedFromBytes }
                return try deleteScannedRow(key, stored: stored)
            }
            if let kept {
                if kept { deleted += 1 }
                continue
            }
            guard try row(key) != nil else { continue }
            try deleteRow(key)
            deleted += 1
        }
        return deleted
    }

    /// The keys `request` matches, with the bytes of the rows the fetch read for them when it
    /// read every one (a scan, or an index whose rows a predicate checked): a change then
    /// takes each row from them instead of looking it up again. Past
    /// ``scannedRowBytesLimit`` the rest are looked up.
    private func fetchKeysAndRows(_ request: FetchRequest, _ entity: EntityDescription) throws
        -> (keys: [RowKey], rows: FetchedRowBytes?) {
        let kept = FetchedRows(maxBytes: Self.scannedRowBytesLimit)
        let keys = try fetchKeys(request, entity, keeping: kept)
        guard kept.spans.count == keys.count, kept.keptCount > 0 else { return (keys, nil) }
        return (keys, FetchedRowBytes(bytes: kept.bytes, spans: kept.spans, keptCount: kept.keptCount))
    }

    /// The most bytes of scanned rows a change by predicate keeps.
    private static var scannedRowBytesLimit: Int { 32 << 20 }
}
