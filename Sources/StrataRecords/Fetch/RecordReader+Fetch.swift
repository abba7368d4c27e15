import StrataStorage

extension RecordReader {
    /// The identifiers of the objects that match `request`, in its order, one page of them.
    ///
    /// - Throws: `StrataError.invalidFetch` before any row is read when the request does not
    ///   fit the model (an unknown or transient key path, a comparison of values that cannot
    ///   compare, a sort through a to-many relationship: see the type checker's rules in
    ///   `FetchTypeChecker`); `StrataError.corrupt` when a tree holds a malformed key.
    public func fetch(_ request: FetchRequest) throws -> [ObjectID] {
        let entityDescription = try entity(request.entity)
        return try fetchKeys(request, entityDescription).map {
            ObjectID(entity: entityDescription.name, primaryKey: $0.pk)
        }
    }

    /// The primary keys of the objects that match `request`, in its order, with their stored
    /// rows (as ``storedRow(of:)`` gives them) when the fetch read them anyway: a scan of every
    /// row, or a predicate or sort an index does not decide. `rows` is then parallel to
    /// `primaryKeys`; it is empty when an index answered alone (reading the rows would cost one
    /// descent each, which is what the caller saves by not asking). For the object layer: a
    /// fetch keeps the rows its scan decoded for its faults to take.
    ///
    /// - Throws: what ``fetch(_:)`` throws.
    public func fetchPrimaryKeysAndRows(_ request: FetchRequest)
        throws -> (primaryKeys: [UInt64], rows: [[StoredValue]]) {
        let (pks, kept) = try fetchPrimaryKeysAndRowBytes(request, keepingAtMost: .max)
        guard !kept.spans.isEmpty else { return (pks, []) }
        let fields = try entity(request.entity).fields
        let rows = try kept.spans.indices.map { i in
            try kept.withRow(at: i) { try RowCodec.decode($0, fields: fields) } ?? []
        }
        return (pks, rows)
    }

    /// The primary keys of the objects that match `request`, in its order, with the stored
    /// bytes of their rows when the fetch read the rows anyway (as
    /// ``fetchPrimaryKeysAndRows(_:)`` says), copied into one buffer and not decoded: the
    /// object layer keeps them for the faults it returns, which decode their own when they
    /// fire. Bytes stop being kept once `maxBytes` are held (the later rows' spans say so).
    package func fetchPrimaryKeysAndRowBytes(_ request: FetchRequest, keepingAtMost maxBytes: Int)
        throws -> (primaryKeys: [UInt64], rows: FetchedRowBytes) {
        let entityDescription = try entity(request.entity)
        // Nothing to keep: no collector, so the plan reads no row it does not need.
        let kept = maxBytes > 0 ? FetchedRows(maxBytes: maxBytes) : nil
        let keys = try fetchKeys(request, entityDescription, keeping: kept)
        guard let kept, kept.spans.count == keys.count, kept.keptCount > 0 else {
            return (keys.map(\.pk), FetchedRowBytes(bytes: [], spans: [], keptCount: 0))
        }
        return (keys.map(\.pk), FetchedRowBytes(bytes: kept.bytes, spans: kept.spans, keptCount: kept.keptCount))
    }

    /// How many objects match `request`'s predicate (its limit and offset apply).
    ///
    /// - Throws: what ``fetch(_:)`` throws.
    public func fetchCount(_ request: FetchRequest) throws -> Int {
        try fetchKeys(request, try entity(request.entity)).count
    }

    /// The plan the fetch uses, for tests and `EXPLAIN`-style diagnostics: the plan of the
    /// request's shape with its constants when the plan cache runs it, as ``fetch(_:)`` does.
    public func fetchPlanDescription(_ request: FetchRequest) throws -> String {
        let entityDescription = try entity(request.entity)
        if let (prepared, values) = cachedShape(of: request),
           let plan = prepared.plan(for: values, derivedAreCurrent: derivedAreCurrent) {
            return plan.description
        }
        return FetchPlan.make(request, entity: entityDescription, derivedAreCurrent: derivedAreCurrent).description
    }

    /// False in a write transaction: the derived values of rows it changed are computed at commit.
    var derivedAreCurrent: Bool {
        if case .write = source { return false }
        return true
    }

    /// Through the model's plan cache: a request of a shape seen before (other constants)
    /// runs as that shape's prepared fetch, with its constants as values.
    func fetchKeys(_ request: FetchRequest, _ entity: EntityDescription,
                   keeping kept: FetchedRows? = nil) throws -> [RowKey] {
        guard let (prepared, values) = cachedShape(of: request) else {
            return try plannedFetchKeys(request, entity, keeping: kept)
        }
        return try fetchKeys(prepared, values, checked: true, keeping: kept)
    }

    /// The prepared fetch of `request`'s shape and its constants as values, checked; nil when
    /// the cache does not plan the request, or when its shape or these values fail a check:
    /// planning with the constants then throws, in the words of the constants (a shape's
    /// error can name a variable, or find a structural mistake before a constant's kind).
    private func cachedShape(of request: FetchRequest) -> (PreparedFetch, FetchBindings)? {
        guard let (prepared, constants) = try? model.fetchPlans.prepared(for: request, model: model) else { return nil }
        let values = FetchBindings(names: prepared.variables, values: constants)
        guard (try? prepared.check(values)) != nil else { return nil }
        return (prepared, values)
    }

    /// Checks and plans `request` with its constants, then runs it.
    func plannedFetchKeys(_ request: FetchRequest, _ entity: EntityDescription,
                          keeping kept: FetchedRows? = nil) throws -> [RowKey] {
        // Mistakes fail before any row is read (an empty store too).
        try FetchTypeChecker(model: model, entity: entity).check(request)
        let plan = FetchPlan.make(request, entity: entity, derivedAreCurrent: derivedAreCurrent)
        let matcher = try plan.residual(request.predicate).map { try CompiledPredicate($0, for: entity) }
        return try run(plan, matching: matcher, request, entity, keeping: kept)
    }

    /// The capacity a fetch's keys start with: one allocation holds the usual handful.
    static var firstKeysCapacity: Int { 16 }

    /// Runs a checked request's plan: candidates from the plan's access, each kept when
    /// `matcher` (the predicate's residual, nil: nothing left to check) accepts it, sorted
    /// unless the index gave the order, then offset and limit.
    /// `kept`, when given, receives the rows of the keys returned, parallel to them, when the
    /// plan reads rows (it is left empty when an index answers alone).
    func run(_ plan: FetchPlan, matching matcher: CompiledPredicate?, _ request: FetchRequest,
             _ entity: EntityDescription, keeping kept: FetchedRows? = nil) throws -> [RowKey] {
        try willScanRows()
        let sorts = !request.sortDescriptors.isEmpty && !plan.ordered
        if !sorts, case .allRows = plan.access, let matcher, matcher.readsOnlyFields, let filter = matcher.rowFilter {
            return try scanDeciding(filter, matcher, request, entity, keeping: kept)
        }
        // The index alone answers when it decides the predicate and fixes the order.
        let needsRows = matcher != nil || sorts
        var scansRows = false
        if case .allRows = plan.access { scansRows = true }
        let keepsRows = kept != nil && (needsRows || scansRows)
        // Offset and limit are not negative (checked); their sum saturates rather than overflows.
        let stopAfter = sorts
            ? nil : request.limit.map { $0 > Int.max - request.offset ? Int.max : $0 + request.offset }
        var keys: [RowKey] = []
        keys.reserveCapacity(Self.firstKeysCapacity)
        var rows: [[StoredValue]] = []
        // The rows are read for the predicate and the sort only: decoded as far as they read.
        let needed = needsRows ? entity.fieldsRead(by: matcher?.predicate, sortedBy: sorts ? request.sortDescriptors : []) : nil
        var regexCache = RegexCache()
        // A predicate on the row's own fields, with nothing to sort: evaluated on the stored
        // bytes, the fields it compares decoded alone (no row built for a row it rejects).
        // In a write these bytes are the transaction's rows: `willScanRows()` wrote its changed
        // rows into the trees before the scan began.
        let readsBytes = !sorts && matcher?.readsOnlyFields == true
        /// Takes one candidate; false when enough are found.
        func consider(_ key: RowKey, _ stored: UnsafeRawBufferPointer?) throws -> Bool {
            if readsBytes, let matcher, let stored {
                let subject = RowBytesSubject(reader: self, key: key, bytes: stored, fields: entity.fields)
                guard try matcher.evaluate(subject, cache: &regexCache) else { return true }
                if keepsRows { kept?.add(stored) }
            } else if needsRows {
                let row: [StoredValue]?
                if let stored {
                    row = try self.row(key, stored: stored, needed: needed)
                } else {
                    // Read in place, its bytes kept while they are at hand.
                    row = try withStoredRow(entity, key.pk) { bytes in
                        let decoded = try needed.map { try RowCodec.decode(bytes, fields: entity.fields, needed: $0) }
                            ?? RowCodec.decode(bytes, fields: entity.fields)
                        if keepsRows { kept?.add(bytes) }
                        return decoded
                    }
                }
                guard let row else { return true }
                if let matcher, !(try matcher.evaluate(RowSubject(reader: self, key: key, row: row), cache: &regexCache)) {
                    if keepsRows && stored == nil { kept?.dropLast() }
                    return true
                }
                if sorts { rows.append(row) }
                if keepsRows, let stored { kept?.add(stored) }
            } else if keepsRows, let stored {
                // A scan of every row with nothing to check (the only plan that keeps rows it
                // does not need, and it always reads in place): its bytes are kept, not decoded.
                // Were a row ever missed here, the spans would not match the keys and the
                // fetch would return none (fetchPrimaryKeysAndRowBytes checks).
                kept?.add(stored)
            }
            keys.append(key)
            return stopAfter.map { keys.count < $0 } ?? true
        }
        switch plan.access {
        case .allRows:
            let tree = RecordTrees.rows(entity)
            try source.scan(tree, prefix: []) { key, cursor in
                try consider(RowKey(entity: entity.index, pk: KeyReader.rowKey(key, tree: tree)), cursor.value)
            }
        case .index(let tree, let ranges, let field):
            // Entries whose value was cut share a key prefix but not an order: when the index
            // gives the order, such a run is sorted by the rows' values before it is taken.
            let leadType = entity.fields[field].type
            var cutRun = CutRun()
            if plan.ordered && (leadType == .string || leadType == .binary) { cutRun.enabled = true }
            func takeCutRun() throws -> Bool {
                var members: [(value: StoredValue, pk: UInt64)] = []
                for pk in cutRun.take() {
                    guard let row = try row(RowKey(entity: entity.index, pk: pk)) else { continue }
                    members.append((row[field], pk))
                }
                members.sort { lhs, rhs in
                    let order = StoredValue.compare(lhs.value, rhs.value) ?? 0
                    return order != 0 ? order < 0 : lhs.pk < rhs.pk
                }
                for member in members where !(try consider(RowKey(entity: entity.index, pk: member.pk), nil)) {
                    return false
                }
                return true
            }
            // Distinct ranges of one index never share an entry, but an IN list may repeat a value.
            var seen = Set<UInt64>()
            guard let cursor = try borrowCursor(tree) else { break }
            defer { giveBack(cursor, tree: tree) }
            scan: for range in ranges {
                var ok = try cursor.seek(range.lower)
                while ok {
                    let key = cursor.key
                    if range.isPast(key) { break }
                    let pk = try KeyReader.trailingPrimaryKey(key, tree: tree)
                    if cutRun.enabled {
                        var reader = KeyReader(key, tree: tree)
                        let cut = try reader.skipValue(leadType)
                        guard reader.remaining >= 8 else { throw reader.corrupt("has no primary key after its value") }
                        if cut {
                            let lead = UnsafeRawBufferPointer(rebasing: key[..<reader.position])
                            if !cutRun.continues(with: lead) {
                                guard try takeCutRun() else { break scan }
                            }
                            cutRun.add(pk, lead: lead)
                            ok = try cursor.next()
                            continue
                        }
                        if !cutRun.isEmpty {
                            guard try takeCutRun() else { break scan }
                        }
                    }
                    if ranges.count == 1 || seen.insert(pk).inserted {
                        if !(try consider(RowKey(entity: entity.index, pk: pk), nil)) { break scan }
                    }
                    ok = try cursor.next()
                }
            }
            if !cutRun.isEmpty { _ = try takeCutRun() }
        case .words(let tree, let query, let searched):
            guard let query else {
                throw StrataError.invalidFetch("a word search planned without its words: run it with values")
            }
            for pk in try wordHolders(in: tree, of: query, searched: searched)
            where !(try consider(RowKey(entity: entity.index, pk: pk), nil)) { break }
        }
        if sorts {
            let paths = request.sortDescriptors.map { $0.keyPath.split(separator: ".").map(String.init) }
            var keyed: [(sortKey: [SortValue], key: RowKey, position: Int)] = []
            keyed.reserveCapacity(keys.count)
            for (position, (key, row)) in zip(keys, rows).enumerated() {
                let subject = RowSubject(reader: self, key: key, row: row)
                keyed.append((try paths.map { path in
                    if case .one(let value) = try subject.values(at: path) { return SortValue(value) }
                    return SortValue(.null)
                }, key, position))
            }
            keyed.sort { lhs, rhs in
                for (i, descriptor) in request.sortDescriptors.enumerated() {
                    let order = lhs.sortKey[i].compare(rhs.sortKey[i])
                    if order != 0 { return descriptor.ascending ? order < 0 : order > 0 }
                }
                return lhs.key.pk < rhs.key.pk
            }
            keys = keyed.map(\.key)
            if let kept, keepsRows { kept.spans = keyed.map { kept.spans[$0.position] } }
        }
        return Self.window(keys, request, kept: keepsRows ? kept : nil)
    }

    /// `keys` from the request's offset, at most its limit; the spans of `kept` (the rows kept
    /// for them, parallel) cut the same.
    private static func window(_ keys: [RowKey], _ request: FetchRequest, kept: FetchedRows?) -> [RowKey] {
        let start = min(request.offset, keys.count)
        let end = request.limit.map { $0 >= keys.count - start ? keys.count : start + $0 } ?? keys.count
        if let kept, !(start == 0 && end == kept.spans.count) { kept.spans = Array(kept.spans[start..<end]) }
        return start == 0 && end == keys.count ? keys : Array(keys[start..<end])
    }

    /// ``run(_:matching:_:_:keeping:)`` for a scan of every row whose predicate `filter`
    /// decides in one walk of each row's stored bytes, a leaf at a time; a row it cannot decide,
    /// or whose value lies in an overflow frame, is decided by `matcher` on its bytes
    /// (``RowBytesSubject``). A function of its own: beside the general path's closures, its
    /// keys were checked for exclusivity at run time on every access, in every scan.
    private func scanDeciding(_ filter: StoredRowFilter, _ matcher: CompiledPredicate, _ request: FetchRequest,
                              _ entity: EntityDescription, keeping kept: FetchedRows?) throws -> [RowKey] {
        // Offset and limit are not negative (checked); their sum saturates rather than overflows.
        let stopAfter = request.limit.map { $0 > Int.max - request.offset ? Int.max : $0 + request.offset }
        var keys: [RowKey] = []
        keys.reserveCapacity(Self.firstKeysCapacity)
        var regexCache = RegexCache()
        let tree = RecordTrees.rows(entity)
        if let cursor = try source.cursor(tree) {
            var ok = try cursor.first()
            leaves: while ok {
                let leaf = try cursor.restOfLeaf()
                for i in leaf.indices {
                    let key = RowKey(entity: entity.index, pk: try KeyReader.rowKey(leaf.key(i), tree: tree))
                    if let stored = leaf.inlineValue(i), let matches = filter.matches(stored) {
                        guard matches else { continue }
                        kept?.add(stored)
                    } else {
                        let value = try leaf.value(i)
                        let matches = try value.withUnsafeBytes { bytes in
                            let subject = RowBytesSubject(reader: self, key: key, bytes: bytes, fields: entity.fields)
                            guard try matcher.evaluate(subject, cache: &regexCache) else { return false }
                            kept?.add(bytes)
                            return true
                        }
                        guard matches else { continue }
                    }
                    keys.append(key)
                    if let stopAfter, keys.count >= stopAfter { break leaves }
                }
                ok = try cursor.next()
            }
        }
        return Self.window(keys, request, kept: kept)
    }
}

/// Consecutive index entries whose leading value was cut to the same bytes, collected so that
/// an ordered fetch can sort them by their full values.
private struct CutRun {
    var enabled = false
    private var lead: [UInt8] = []
    private var pks: [UInt64] = []

    var isEmpty: Bool { pks.isEmpty }

    func continues(with lead: UnsafeRawBufferPointer) -> Bool {
        !pks.isEmpty && self.lead.elementsEqual(lead)
    }

    mutating func add(_ pk: UInt64, lead: UnsafeRawBufferPointer) {
        if pks.isEmpty { self.lead = Array(lead) }
        pks.append(pk)
    }

    mutating func take() -> [UInt64] {
        defer { pks.removeAll(keepingCapacity: true) }
        return pks
    }
}

/// A sort key's value with a string's NFC bytes computed once per row rather than once per
/// comparison; it orders as ``StoredValue/compare(_:_:)`` does.
private struct SortValue {
    let value: StoredValue
    let nfc: [UInt8]?

    init(_ value: StoredValue) {
        self.value = value
        if case .string(let string) = value, !TextOrder.isASCII(string) {
            nfc = string._nfcCodeUnits
        } else {
            nfc = nil
        }
    }

    func compare(_ other: SortValue) -> Int {
        if case .string(let lhs) = value, case .string(let rhs) = other.value {
            switch (nfc, other.nfc) {
            case (nil, nil): return TextOrder.compareBytes(lhs, rhs)
            case (let lhsBytes?, let rhsBytes?): return TextOrder.compareBytes(lhsBytes, rhsBytes)
            case (let lhsBytes?, nil): return TextOrder.compareBytes(lhsBytes, Array(rhs.utf8))
            case (nil, let rhsBytes?): return TextOrder.compareBytes(Array(lhs.utf8), rhsBytes)
            }
        }
        return StoredValue.compare(value, other.value) ?? 0
    }
}
