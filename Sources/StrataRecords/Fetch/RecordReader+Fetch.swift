import StrataStorage

extension RecordReader {
    /// The identifiers of the objects that match `request`, in its order, one page of them.
    public func fetch(_ request: FetchRequest) throws -> [ObjectID] {
        let e = try entity(request.entity)
        return try fetchKeys(request, e).map { ObjectID(entity: e.name, primaryKey: $0.key.pk) }
    }

    /// How many objects match `request`'s predicate (its limit and offset apply).
    public func fetchCount(_ request: FetchRequest) throws -> Int {
        try fetchKeys(request, try entity(request.entity)).count
    }

    /// The plan the fetch uses, for tests and `EXPLAIN`-style diagnostics.
    public func fetchPlanDescription(_ request: FetchRequest) throws -> String {
        FetchPlan.make(request, entity: try entity(request.entity)).description
    }

    func fetchKeys(_ request: FetchRequest, _ e: EntityDescription) throws -> [(key: RowKey, row: [Value])] {
        let plan = FetchPlan.make(request, entity: e)
        try willScanRows()
        let matcher = try request.predicate.map { try CompiledPredicate($0) }
        // Unknown and transient key paths fail before any row is read (an empty store too).
        for s in request.sortDescriptors { try checkKeyPath(s.keyPath.split(separator: ".").map(String.init), from: e) }
        for path in request.predicate.map(Self.keyPaths) ?? [] { try checkKeyPath(path, from: e) }
        let stopAfter = plan.ordered || request.sortDescriptors.isEmpty ? request.limit.map { $0 + request.offset } : nil
        var out: [(key: RowKey, row: [Value])] = []
        var seen = Set<UInt64>()
        func consider(_ pk: UInt64) throws -> Bool {
            guard seen.insert(pk).inserted else { return true }
            let key = RowKey(entity: e.index, pk: pk)
            guard let row = try row(key) else { return true }
            if let matcher, !(try matcher.evaluate(RowSubject(reader: self, key: key, row: row))) { return true }
            out.append((key, row))
            return stopAfter.map { out.count < $0 } ?? true
        }
        switch plan.access {
        case .allRows:
            var keys: [UInt64] = []
            try source.scan(RecordTrees.rows(e), prefix: []) { key, _ in
                keys.append(KeyEncoding.decodePrimaryKey(key))
                return true
            }
            for pk in keys where !(try consider(pk)) { break }
        case .index(let tree, let ranges, _):
            scan: for r in ranges {
                guard let c = try source.cursor(tree) else { break }
                var ok = try c.seek(r.lower)
                while ok {
                    let k = c.key
                    if let upper = r.upper, !k.starts(with: upper), !k.lexicographicallyPrecedes(upper) { break }
                    let pk = KeyEncoding.decodePrimaryKey(UnsafeRawBufferPointer(rebasing: k[(k.count - 8)...]))
                    if !(try consider(pk)) { break scan }
                    ok = try c.next()
                }
            }
        }
        if !request.sortDescriptors.isEmpty && !plan.ordered {
            let paths = request.sortDescriptors.map { $0.keyPath.split(separator: ".").map(String.init) }
            var keyed: [([Value], (key: RowKey, row: [Value]))] = []
            for item in out {
                let subject = RowSubject(reader: self, key: item.key, row: item.row)
                keyed.append((try paths.map { p in if case .one(let v) = try subject.values(at: p) { return v }; return .null }, item))
            }
            keyed.sort { a, b in
                for (i, d) in request.sortDescriptors.enumerated() {
                    let c = Value.compare(a.0[i], b.0[i]) ?? 0
                    if c != 0 { return d.ascending ? c < 0 : c > 0 }
                }
                return a.1.key.pk < b.1.key.pk
            }
            out = keyed.map(\.1)
        }
        let start = min(request.offset, out.count)
        let end = request.limit.map { min(out.count, start + $0) } ?? out.count
        return Array(out[start..<end])
    }
}

extension RecordReader {
    /// Every key path a predicate reads.
    static func keyPaths(_ p: Predicate) -> [[String]] {
        func paths(_ x: Expression) -> [[String]] {
            switch x {
            case .keyPath(let k): return [k]
            case .aggregate(_, let k): return [k]
            case .list(let items): return items.flatMap(paths)
            case .constant: return []
            }
        }
        switch p {
        case .constant: return []
        case .comparison(let c): return paths(c.lhs) + paths(c.rhs)
        case .and(let ps), .or(let ps): return ps.flatMap(keyPaths)
        case .not(let q): return keyPaths(q)
        }
    }
}

extension RecordReader {
    /// Throws the error a predicate or sort over `keyPath` would (a transient or unknown name).
    func checkKeyPath(_ keyPath: [String], from start: EntityDescription) throws {
        var ei = start.index
        for name in keyPath {
            let e = model.entities[ei]
            if e.isTransient(name) {
                throw StrataError.invalidFetch("'\(name)' of \(e.name) is transient: it is never stored, so a stored fetch cannot sort by it")
            }
            if let rel = e.relationship(name) { ei = rel.targetIndex; continue }
            guard e.fieldIndex[name] != nil else { throw StrataError.invalidFetch("\(e.name) has no property '\(name)'") }
        }
    }
}
