import StrataStorage

/// One row as predicates and derived expressions see it: the one place key paths are walked.
/// Through to-one relationships a path gives one value; through a to-many relationship many
/// (a to-many itself gives its members' primary keys).
struct RowSubject: PredicateSubject {
    let reader: RecordReader
    let key: RowKey
    let row: [StoredValue]

    func value(atField field: Int) throws -> StoredValue { row[field] }

    func values(at keyPath: [String]) throws -> KeyPathValues {
        if keyPath.isEmpty { return .one(.int(Int64(bitPattern: key.pk))) }  // SELF
        // Attributes and to-one hops (the usual key path, and every derived copy): one row at
        // a time, no frontier built.
        var currentKey = key, currentRow = row
        for (depth, name) in keyPath.enumerated() {
            let entity = reader.model.entities[currentKey.entity]
            guard let field = entity.fieldIndex[name], entity.fields[field].kind != .auxiliary else {
                return try frontierValues(keyPath, from: depth, key: currentKey, row: currentRow)
            }
            if depth == keyPath.count - 1 { return .one(currentRow[field]) }
            guard case .toOne(let target) = entity.fields[field].kind else {
                throw StrataError.invalidFetch("'\(name)' in '\(keyPath.joined(separator: "."))' is an attribute of "
                                               + "\(entity.name), not a relationship")
            }
            guard case .int(let targetKey) = currentRow[field] else { return .one(.null) }
            let next = RowKey(entity: target, pk: UInt64(bitPattern: targetKey))
            guard let nextRow = try reader.row(next) else { return .one(.null) }
            (currentKey, currentRow) = (next, nextRow)
        }
        return .one(.null)
    }

    /// The rest of `keyPath` from component `start`, where it leaves attributes and to-one
    /// hops (a to-many relationship, or a name that is no stored field), for the row `key`.
    private func frontierValues(_ keyPath: [String], from start: Int, key: RowKey,
                                row: [StoredValue]) throws -> KeyPathValues {
        var frontier: [(RowKey, [StoredValue])] = [(key, row)]
        var many = false
        for depth in start..<keyPath.count {
            let name = keyPath[depth]
            let last = depth == keyPath.count - 1
            var next: [(RowKey, [StoredValue])] = []
            var out: [StoredValue] = []
            for (rowKey, rowValues) in frontier {
                let entity = reader.model.entities[rowKey.entity]
                if let field = entity.fieldIndex[name], entity.fields[field].kind != .auxiliary {
                    if case .toOne(let targetEntity) = entity.fields[field].kind, !last {
                        if case .int(let pk) = rowValues[field],
                           let target = try reader.row(RowKey(entity: targetEntity, pk: UInt64(bitPattern: pk))) {
                            next.append((RowKey(entity: targetEntity, pk: UInt64(bitPattern: pk)), target))
                        } else if !many {
                            return .one(.null)
                        }
                    } else if last {
                        out.append(rowValues[field])
                    } else {
                        throw StrataError.invalidFetch("'\(name)' in '\(keyPath.joined(separator: "."))' is an "
                                                       + "attribute of \(entity.name), not a relationship")
                    }
                } else if let rel = entity.relationship(name), rel.isToMany {
                    many = true
                    let members = try reader.memberKeys(rel, of: rowKey)
                    if last {
                        out += members.map { .int(Int64(bitPattern: $0)) }
                    } else {
                        for pk in members {
                            let memberKey = RowKey(entity: rel.targetIndex, pk: pk)
                            if let memberRow = try reader.row(memberKey) { next.append((memberKey, memberRow)) }
                        }
                    }
                } else if entity.isTransient(name) {
                    throw StrataError.invalidFetch("'\(name)' of \(entity.name) is transient: it is never stored, "
                                                   + "so a stored fetch cannot use it")
                } else {
                    throw StrataError.invalidFetch("\(entity.name) has no property '\(name)' "
                                                   + "(in '\(keyPath.joined(separator: "."))')")
                }
            }
            if last { return many ? .many(out) : .one(out.first ?? .null) }
            frontier = next
        }
        return .one(.null)
    }
}

/// A row as it is stored, for a scan's predicate that reads only the row's own fields
/// (``CompiledPredicate/readsOnlyFields``): each field it compares is decoded from the bytes
/// alone, and no row is built for rows the predicate rejects. Any other key path decodes the
/// row and walks it as ``RowSubject`` does. The bytes are the scan's, valid for one row.
struct RowBytesSubject: PredicateSubject {
    let reader: RecordReader
    let key: RowKey
    let bytes: UnsafeRawBufferPointer
    let fields: [Field]

    func value(atField field: Int) throws -> StoredValue {
        try RowCodec.value(ofField: field, in: bytes, fields: fields)
    }

    static var holdsStoredRow: Bool { true }

    func storedValue(atField field: Int) throws -> UnsafeRawBufferPointer? {
        try RowCodec.storedValue(ofField: field, in: bytes, fields: fields)
    }

    func values(at keyPath: [String]) throws -> KeyPathValues {
        try RowSubject(reader: reader, key: key, row: RowCodec.decode(bytes, fields: fields)).values(at: keyPath)
    }
}
