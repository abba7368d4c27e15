import StrataStorage

/// One row as predicates and derived expressions see it: the one place key paths are walked.
/// Through to-one relationships a path gives one value; through a to-many relationship many
/// (a to-many itself gives its members' primary keys).
struct RowSubject: PredicateSubject {
    let reader: RecordReader
    let key: RowKey
    let row: [StoredValue]

    func values(at keyPath: [String]) throws -> KeyPathValues {
        if keyPath.isEmpty { return .one(.int(Int64(bitPattern: key.pk))) }  // SELF
        // Attributes and to-one hops (the usual key path, and every derived copy): one row at
        // a time, no frontier built.
        var k = key, r = row
        for (depth, name) in keyPath.enumerated() {
            let e = reader.model.entities[k.entity]
            guard let f = e.fieldIndex[name], e.fields[f].kind != .auxiliary else {
                return try frontierValues(keyPath, from: depth, key: k, row: r)
            }
            if depth == keyPath.count - 1 { return .one(r[f]) }
            guard case .toOne(let t) = e.fields[f].kind else {
                throw StrataError.invalidFetch("'\(name)' in '\(keyPath.joined(separator: "."))' is an attribute of \(e.name), not a relationship")
            }
            guard case .int(let p) = r[f] else { return .one(.null) }
            let next = RowKey(entity: t, pk: UInt64(bitPattern: p))
            guard let nextRow = try reader.row(next) else { return .one(.null) }
            (k, r) = (next, nextRow)
        }
        return .one(.null)
    }

    /// The rest of `keyPath` from component `start`, where it leaves attributes and to-one
    /// hops (a to-many relationship, or a name that is no stored field), for the row `key`.
    private func frontierValues(_ keyPath: [String], from start: Int, key: RowKey, row: [StoredValue]) throws -> KeyPathValues {
        var frontier: [(RowKey, [StoredValue])] = [(key, row)]
        var many = false
        for depth in start..<keyPath.count {
            let name = keyPath[depth]
            let last = depth == keyPath.count - 1
            var next: [(RowKey, [StoredValue])] = []
            var out: [StoredValue] = []
            for (k, r) in frontier {
                let e = reader.model.entities[k.entity]
                if let f = e.fieldIndex[name], e.fields[f].kind != .auxiliary {
                    if case .toOne(let t) = e.fields[f].kind, !last {
                        if case .int(let pk) = r[f], let target = try reader.row(RowKey(entity: t, pk: UInt64(bitPattern: pk))) {
                            next.append((RowKey(entity: t, pk: UInt64(bitPattern: pk)), target))
                        } else if !many {
                            return .one(.null)
                        }
                    } else if last {
                        out.append(r[f])
                    } else {
                        throw StrataError.invalidFetch("'\(name)' in '\(keyPath.joined(separator: "."))' is an attribute of \(e.name), not a relationship")
                    }
                } else if let rel = e.relationship(name), rel.isToMany {
                    many = true
                    let members = try reader.memberKeys(rel, of: k)
                    if last {
                        out += members.map { .int(Int64(bitPattern: $0)) }
                    } else {
                        for pk in members {
                            let mk = RowKey(entity: rel.targetIndex, pk: pk)
                            if let mr = try reader.row(mk) { next.append((mk, mr)) }
                        }
                    }
                } else if e.isTransient(name) {
                    throw StrataError.invalidFetch("'\(name)' of \(e.name) is transient: it is never stored, so a stored fetch cannot use it")
                } else {
                    throw StrataError.invalidFetch("\(e.name) has no property '\(name)' (in '\(keyPath.joined(separator: "."))')")
                }
            }
            if last { return many ? .many(out) : .one(out.first ?? .null) }
            frontier = next
        }
        return .one(.null)
    }
}
