import StrataStorage

extension RecordReader {
    /// The identifiers of the objects that match `request`, in its order, one page of them.
    ///
    /// - Throws: `StrataError.invalidFetch` before any row is read when the request does not
    ///   fit the model (an unknown or transient key path, a comparison of values that cannot
    ///   compare, a sort through a to-many relationship: see the type checker's rules in
    ///   `FetchTypeChecker`).
    public func fetch(_ request: FetchRequest) throws -> [ObjectID] {
        let e = try entity(request.entity)
        return try fetchKeys(request, e).map { ObjectID(entity: e.name, primaryKey: $0.pk) }
    }

    /// How many objects match `request`'s predicate (its limit and offset apply).
    ///
    /// - Throws: what ``fetch(_:)`` throws.
    public func fetchCount(_ request: FetchRequest) throws -> Int {
        try fetchKeys(request, try entity(request.entity)).count
    }

    /// The plan the fetch uses, for tests and `EXPLAIN`-style diagnostics.
    public func fetchPlanDescription(_ request: FetchRequest) throws -> String {
        FetchPlan.make(request, entity: try entity(request.entity)).description
    }

    func fetchKeys(_ request: FetchRequest, _ e: EntityDescription) throws -> [RowKey] {
        // Mistakes fail before any row is read (an empty store too).
        try FetchTypeChecker(model: model, entity: e).check(request)
        let plan = FetchPlan.make(request, entity: e)
        try willScanRows()
        let matcher = try plan.residual(request.predicate).map { try CompiledPredicate($0) }
        let sorts = !request.sortDescriptors.isEmpty && !plan.ordered
        // The index alone answers when it decides the predicate and fixes the order.
        let needsRows = matcher != nil || sorts
        let stopAfter = sorts ? nil : request.limit.map { $0 + request.offset }
        var keys: [RowKey] = []
        var rows: [[Value]] = []
        /// Takes one candidate; false when enough are found.
        func consider(_ key: RowKey, _ stored: UnsafeRawBufferPointer?) throws -> Bool {
            if needsRows {
                guard let row = try stored.map({ try row(key, stored: $0) }) ?? row(key) else { return true }
                if let matcher, !(try matcher.evaluate(RowSubject(reader: self, key: key, row: row))) { return true }
                if sorts { rows.append(row) }
            }
            keys.append(key)
            return stopAfter.map { keys.count < $0 } ?? true
        }
        switch plan.access {
        case .allRows:
            try source.scan(RecordTrees.rows(e), prefix: []) { key, cursor in
                try consider(RowKey(entity: e.index, pk: KeyEncoding.decodePrimaryKey(key)), cursor.value)
            }
        case .index(let tree, let ranges, _):
            // Distinct ranges of one index never share an entry, but an IN list may repeat a value.
            var seen = Set<UInt64>()
            scan: for r in ranges {
                guard let c = try source.cursor(tree) else { break }
                var ok = try c.seek(r.lower)
                while ok {
                    let k = c.key
                    if let upper = r.upper, !k.starts(with: upper), !k.lexicographicallyPrecedes(upper) { break }
                    let pk = KeyEncoding.decodePrimaryKey(UnsafeRawBufferPointer(rebasing: k[(k.count - 8)...]))
                    if ranges.count == 1 || seen.insert(pk).inserted {
                        if !(try consider(RowKey(entity: e.index, pk: pk), nil)) { break scan }
                    }
                    ok = try c.next()
                }
            }
        }
        if sorts {
            let paths = request.sortDescriptors.map { $0.keyPath.split(separator: ".").map(String.init) }
            var keyed: [(sortKey: [Value], key: RowKey)] = []
            keyed.reserveCapacity(keys.count)
            for (key, row) in zip(keys, rows) {
                let subject = RowSubject(reader: self, key: key, row: row)
                keyed.append((try paths.map { p in if case .one(let v) = try subject.values(at: p) { return v }; return .null }, key))
            }
            keyed.sort { a, b in
                for (i, d) in request.sortDescriptors.enumerated() {
                    let c = Value.compare(a.sortKey[i], b.sortKey[i]) ?? 0
                    if c != 0 { return d.ascending ? c < 0 : c > 0 }
                }
                return a.key.pk < b.key.pk
            }
            keys = keyed.map(\.key)
        }
        let start = min(request.offset, keys.count)
        let end = request.limit.map { min(keys.count, start + $0) } ?? keys.count
        return Array(keys[start..<end])
    }
}
