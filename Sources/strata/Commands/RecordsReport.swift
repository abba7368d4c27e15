import Foundation
import StrataRecords
import StrataStorage

/// The record-layer parts of `info`, `check` and `dump`, for stores that hold a model.
enum RecordsReport {
    /// The record layer of `store`, or nil for a plain key/value store.
    static func open(_ store: Store) throws -> RecordStore? {
        guard try RecordStore.hasModel(store) else { return nil }
        return try RecordStore(opening: store)
    }

    /// The model, one entity per block, with its row count.
    static func modelText(_ records: RecordStore) throws -> String {
        var out = "model:\n"
        try records.read { r in
            for e in records.model.entities {
                out += "  \(e.name): \(try r.count(e.name)) rows\n"
                for line in records.model.schemaLines where line.hasPrefix("  \(e.name).") || line.hasPrefix("  \(e.name):") {
                    out += "    " + line.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\(e.name).", with: "") + "\n"
                }
            }
        }
        return out
    }

    /// One JSON object per row: `_id`, every attribute and derived attribute, and to-one
    /// relationships as the target's primary key.
    static func dumpRows(_ records: RecordStore, entity: String, limit: Int?) throws {
        try records.read { r in
            guard let e = records.model.entity(entity) else { throw ToolError("no entity '\(entity)' in the store's model") }
            var n = 0
            for id in try r.objects(entity) {
                if let limit, n >= limit { break }
                n += 1
                var fields = ["\"_id\":\(id.primaryKey)"]
                let values = try r.values(of: id) ?? [:]
                for a in e.attributes where !a.isTransient { fields.append("\(json(a.name)):\(json(values[a.name] ?? .null))") }
                for rel in e.relationships where !rel.isToMany {
                    fields.append("\(json(rel.name)):\(try r.target(of: rel.name, of: id).map { String($0.primaryKey) } ?? "null")")
                }
                for d in e.derivedAttributes { fields.append("\(json(d.name)):\(json(values[d.name] ?? .null))") }
                print("{" + fields.joined(separator: ",") + "}")
            }
        }
    }

    static func json(_ v: StoredValue) -> String {
        switch v {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : json(String(d))
        case .decimal(let d): return d.description
        case .string(let s): return json(s)
        case .date(let d): return json(ISO8601DateFormatter().string(from: d))
        case .uuid(let u): return json(u.uuidString)
        case .binary(let b): return json(Data(b).base64EncodedString())
        }
    }

    static func json(_ s: String) -> String { JSON.quote(s) }
}
