import Foundation

/// Writes one history entry (``HistoryCodec``) from a commit's change set. A commit of many
/// rows calls it per row and per field, so it works from indexes: each entity and field name
/// is looked up by string once per entry, then found by its entity and slot (a string-keyed
/// name table hashed per field and a buffer per row were most of what history cost an
/// inserted row; decision 60).
struct HistoryEncoder {
    let model: Model
    /// The name table, in index order.
    private var names: [String] = []
    private var nameIndexes: [String: UInt64] = [:]
    /// Each entity's name index + 1 (0: not in the table yet).
    private var entityNames: [UInt64]
    /// Each entity's fields' name indexes + 1 (0: not in the table yet).
    private var fieldNames: [[UInt64]]
    /// The entity of the last row, found again by comparing names (rows come entity by entity).
    private var lastEntity: EntityDescription?
    private var body: [UInt8] = []
    private var count: UInt64 = 0

    init(model: Model) {
        self.model = model
        entityNames = Array(repeating: 0, count: model.entities.count)
        fieldNames = model.entities.map { Array(repeating: 0, count: $0.fields.count) }
    }

    private mutating func nameIndex(_ name: String) -> UInt64 {
        if let known = nameIndexes[name] { return known }
        let index = UInt64(names.count)
        nameIndexes[name] = index
        names.append(name)
        return index
    }

    private mutating func entityName(_ entity: Int) -> UInt64 {
        if entityNames[entity] == 0 { entityNames[entity] = nameIndex(model.entities[entity].name) + 1 }
        return entityNames[entity] - 1
    }

    private mutating func fieldName(_ entity: EntityDescription, _ slot: Int) -> UInt64 {
        if fieldNames[entity.index][slot] == 0 {
            fieldNames[entity.index][slot] = nameIndex(entity.fields[slot].name) + 1
        }
        return fieldNames[entity.index][slot] - 1
    }

    private mutating func entity(named name: String) -> EntityDescription? {
        if let last = lastEntity, last.name == name { return last }
        lastEntity = model.entity(name)
        return lastEntity
    }

    /// Whether slot `slot` of a row of `kind` is listed (FORMAT.md: an insert lists what is not
    /// nil, an update what changed, a delete what is preserved and not nil; never bookkeeping).
    @inline(__always)
    private static func lists(_ field: Field, _ value: StoredValue, _ kind: HistoryChange.Kind) -> Bool {
        if field.kind == .auxiliary { return false }
        switch kind {
        case .insert: return !value.isNull
        case .delete: return field.isPreservedAfterDeletion && !value.isNull
        default: return true
        }
    }

    mutating func appendRows(_ rows: [RecordChanges.Row], _ kind: HistoryChange.Kind) {
        for row in rows {
            guard let entity = entity(named: row.id.entity),
                  let values = kind == .delete ? row.previous : row.values else { continue }
            let fields = entity.fields
            var listed = 0
            if kind == .update {
                for slot in row.changedFields where slot < fields.count && fields[slot].kind != .auxiliary { listed += 1 }
                // An update that moved only bookkeeping fields is no change a consumer sees.
                if listed == 0 { continue }
            } else {
                for slot in values.indices where slot < fields.count && Self.lists(fields[slot], values[slot], kind) {
                    listed += 1
                }
            }
            body.append(kind.rawValue)
            RowCodec.appendVarint(&body, entityName(entity.index))
            RowCodec.appendVarint(&body, row.id.primaryKey)
            RowCodec.appendVarint(&body, UInt64(listed))
            if kind == .update {
                for slot in row.changedFields where slot < fields.count && fields[slot].kind != .auxiliary {
                    appendValue(entity, slot, values[slot])
                }
            } else {
                for slot in values.indices where slot < fields.count && Self.lists(fields[slot], values[slot], kind) {
                    appendValue(entity, slot, values[slot])
                }
            }
            count += 1
        }
    }

    private mutating func appendValue(_ entity: EntityDescription, _ slot: Int, _ value: StoredValue) {
        RowCodec.appendVarint(&body, fieldName(entity, slot))
        switch entity.fields[slot].kind {
        case .toOne(let target):
            body.append(HistoryCodec.toOneFlag)
            if case .int(let key) = value {
                body.append(1)
                RowCodec.appendVarint(&body, entityName(target))
                RowCodec.appendVarint(&body, UInt64(bitPattern: key))
            } else {
                body.append(0)
            }
        case .derived:
            body.append(HistoryCodec.derivedFlag)
            RowCodec.appendValue(value, to: &body, tagged: true)
        case .attribute, .auxiliary:
            body.append(0)
            RowCodec.appendValue(value, to: &body, tagged: true)
        }
    }

    mutating func appendLink(_ link: RecordChanges.Link) {
        body.append(link.added ? HistoryChange.Kind.link.rawValue : HistoryChange.Kind.unlink.rawValue)
        RowCodec.appendVarint(&body, nameIndex(link.id.entity))
        RowCodec.appendVarint(&body, link.id.primaryKey)
        RowCodec.appendVarint(&body, nameIndex(link.relationship))
        RowCodec.appendVarint(&body, nameIndex(link.other.entity))
        RowCodec.appendVarint(&body, link.other.primaryKey)
        count += 1
    }

    /// The whole entry: the header, the name table, the changes; `nil` when no change was listed.
    func finish(transactionID: UInt64, date: Date, author: String?) -> [UInt8]? {
        if count == 0 { return nil }
        var out: [UInt8] = [HistoryCodec.version]
        out.reserveCapacity(body.count + 64 + names.reduce(0) { $0 + $1.utf8.count + 1 })
        RowCodec.appendLE(&out, date.timeIntervalSinceReferenceDate.bitPattern)
        RowCodec.appendVarint(&out, transactionID)
        let authorBytes = Array((author ?? "").utf8)
        RowCodec.appendVarint(&out, UInt64(authorBytes.count))
        out.append(contentsOf: authorBytes)
        RowCodec.appendVarint(&out, UInt64(names.count))
        for name in names {
            RowCodec.appendVarint(&out, UInt64(name.utf8.count))
            out.append(contentsOf: name.utf8)
        }
        RowCodec.appendVarint(&out, count)
        out.append(contentsOf: body)
        return out
    }
}
