import StrataStorage

/// One row as predicates see it: key paths through to-one relationships give one value,
/// through a to-many relationship many (a to-many itself gives its members' primary keys).
struct RowSubject: PredicateSubject {
    let reader: RecordReader
    let key: RowKey
    let row: [Value]

    func values(at keyPath: [String]) throws -> KeyPathValues {
        if keyPath.isEmpty { return .one(.int(Int64(bitPattern: key.pk))) }  // SELF
        if keyPath.count == 1 {
            // The common case, an attribute of the row itself: no frontier to build.
            let e = reader.model.entities[key.entity]
            if let f = e.fieldIndex[keyPath[0]], e.fields[f].kind != .auxiliary { return .one(row[f]) }
        }
        var frontier: [(RowKey, [Value])] = [(key, row)]
        var many = false
        for (depth, name) in keyPath.enumerated() {
            let last = depth == keyPath.count - 1
            var next: [(RowKey, [Value])] = []
            var out: [Value] = []
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
