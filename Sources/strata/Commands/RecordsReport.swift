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
        var out = "model: version \(records.model.version)\n"
        try records.read { reader in
            for entity in records.model.entities {
                out += "  \(entity.name): \(try reader.count(entity.name)) rows\n"
                for line in records.model.schemaLines
                where line.hasPrefix("  \(entity.name).") || line.hasPrefix("  \(entity.name):") {
                    out += "    " + line.trimmingCharacters(in: .whitespaces)
                        .replacingOccurrences(of: "\(entity.name).", with: "") + "\n"
                }
            }
        }
        return out
    }

    /// The persistent history's state: whether commits record it, what it keeps, and its size.
    static func historyText(_ records: RecordStore) throws -> String {
        let summary = try records.read { try $0.historySummary() }
        guard summary.isRecording || summary.transactionCount > 0 || summary.newest > .start else {
            return "history: not recorded\n"
        }
        var line = "history: " + (summary.isRecording ? "recorded" : "not recorded (stopped)")
        line += ", \(summary.transactionCount) transaction\(summary.transactionCount == 1 ? "" : "s") kept"
        if let oldest = summary.oldest { line += " (tokens \(oldest)...\(summary.newest))" }
        line += ", \(humanBytes(summary.bytes))"
        if summary.purgedThrough > .start { line += ", purged through token \(summary.purgedThrough)" }
        return line + "\n"
    }

    /// The range of primary keys the store allocates from (FORMAT.md §12, "Primary-key ranges").
    static func keyRangeText(_ records: RecordStore) throws -> String {
        let range = try records.read { try $0.keyRange() }
        return "primary keys: range \(range.number) (\(range.lowerBound)..<\(range.upperBound))\n"
    }

    /// One JSON object per row: `_id`, every attribute and derived attribute, and to-one
    /// relationships as the target's primary key.
    static func dumpRows(_ records: RecordStore, entity: String, limit: Int?) throws {
        try records.read { reader in
            guard let entityDescription = records.model.entity(entity) else {
                throw ToolError("no entity '\(entity)' in the store's model")
            }
            var printed = 0
            for id in try reader.objects(entity) {
                if let limit, printed >= limit { break }
                printed += 1
                var fields = ["\"_id\":\(id.primaryKey)"]
                let values = try reader.values(of: id) ?? [:]
                for attribute in entityDescription.attributes where !attribute.isTransient {
                    fields.append("\(json(attribute.name)):\(json(values[attribute.name] ?? .null))")
                }
                for rel in entityDescription.relationships where !rel.isToMany {
                    let target = try reader.target(of: rel.name, of: id).map { String($0.primaryKey) } ?? "null"
                    fields.append("\(json(rel.name)):\(target)")
                }
                for derived in entityDescription.derivedAttributes {
                    fields.append("\(json(derived.name)):\(json(values[derived.name] ?? .null))")
                }
                print("{" + fields.joined(separator: ",") + "}")
            }
        }
    }

    static func json(_ value: StoredValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let bool): return bool ? "true" : "false"
        case .int(let integer): return String(integer)
        case .double(let double): return double.isFinite ? String(double) : json(String(double))
        case .decimal(let decimal): return decimal.description
        case .string(let string): return json(string)
        case .date(let date): return json(ISO8601DateFormatter().string(from: date))
        case .uuid(let uuid): return json(uuid.uuidString)
        case .binary(let bytes): return json(Data(bytes).base64EncodedString())
        }
    }

    static func json(_ text: String) -> String { JSON.quote(text) }
}
