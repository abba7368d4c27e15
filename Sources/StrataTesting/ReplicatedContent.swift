import Foundation
import StrataRecords

/// What a replicated store holds, as `psql -At` prints its tables, to compare a store with its
/// replica in PostgreSQL: per entity its rows (pk, then the integer, text, boolean and decimal
/// columns, derived ones included, then the to-one targets) sorted by pk, and each join table's
/// pairs.
package enum ReplicatedContent {
    /// What the store holds, as `psql -At` prints the replicated tables: per entity, its rows
    /// (pk, the to-one targets, the integer, text, boolean and decimal columns) sorted by pk,
    /// and each join table's pairs.
    package static func ofStore(_ store: RecordStore) throws -> [String: [String]] {
        try store.read { reader in
            var out: [String: [String]] = [:]
            for entity in store.model.entities {
                var lines: [String] = []
                for id in try reader.objects(entity.name).sorted(by: { $0.primaryKey < $1.primaryKey }) {
                    let values = try reader.values(of: id) ?? [:]
                    var fields = [String(id.primaryKey)]
                    for name in comparedColumns(entity) {
                        if entity.relationship(name) != nil {
                            fields.append(try reader.target(of: name, of: id).map { String($0.primaryKey) } ?? "")
                        } else {
                            fields.append(text(values[name] ?? .null))
                        }
                    }
                    lines.append(fields.joined(separator: "|"))
                }
                out[entity.name] = lines
                for relationship in entity.relationships where relationship.isManyToMany
                    && "\(entity.name).\(relationship.name)" <= "\(relationship.target).\(relationship.inverse)" {
                    var pairs: [String] = []
                    for id in try reader.objects(entity.name) {
                        for member in try reader.members(of: relationship.name, of: id) {
                            pairs.append("\(id.primaryKey)|\(member.primaryKey)")
                        }
                    }
                    out["\(entity.name)_\(relationship.name)"] = pairs.sorted()
                }
            }
            return out
        }
    }

    /// The same, read from PostgreSQL (with `psql`).
    package static func ofDatabase(_ database: String, in cluster: PostgresCluster, model: Model) throws
        -> [String: [String]] {
        var out: [String: [String]] = [:]
        for entity in model.entities {
            // Numbers compare by value: a server's 113.2500 is the store's 113.25 (the push
            // leaves the server's own writes as the server spelled them).
            let decimals = Set(entity.attributes.filter { $0.type == .decimal }.map(\.name)
                + entity.derivedAttributes.filter { $0.type == .decimal }.map(\.name))
            let columns = (["pk"] + comparedColumns(entity)).map { decimals.contains($0) ? "trim_scale(\"\($0)\")" : "\"\($0)\"" }
                .joined(separator: ", ")
            let text = try cluster.psql("SELECT \(columns) FROM \"\(entity.name)\" ORDER BY pk", database: database)
            out[entity.name] = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            for relationship in entity.relationships where relationship.isManyToMany
                && "\(entity.name).\(relationship.name)" <= "\(relationship.target).\(relationship.inverse)" {
                let table = "\(entity.name)_\(relationship.name)"
                let pairs = try cluster.psql("SELECT source, target FROM \"\(table)\"", database: database)
                out[table] = pairs.split(separator: "\n").map(String.init).sorted()
            }
        }
        return out
    }

    static func comparedColumns(_ entity: EntityDescription) -> [String] {
        let kept: Set<AttributeType> = [.int16, .int32, .int64, .string, .bool, .decimal]
        return entity.attributes.filter { kept.contains($0.type) }.map(\.name)
            + entity.derivedAttributes.filter { kept.contains($0.type) }.map(\.name)
            + entity.relationships.filter { !$0.isToMany }.map(\.name)
    }

    package static func text(_ value: StoredValue) -> String {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag ? "t" : "f"
        case .int(let integer): return String(integer)
        case .decimal(let decimal): return decimal.description
        case .string(let string): return string
        default: return "\(value)"
        }
    }

}

extension ReplicatedContent {
    /// The lines that differ between two contents, table by table (`-` only in the first,
    /// `+` only in the second), for a failure message.
    package static func difference(_ first: [String: [String]], _ second: [String: [String]]) -> String {
        var out: [String] = []
        for table in Set(first.keys).union(second.keys).sorted() {
            let a = Set(first[table] ?? []), b = Set(second[table] ?? [])
            for line in a.subtracting(b).sorted() { out.append("\(table) - \(line)") }
            for line in b.subtracting(a).sorted() { out.append("\(table) + \(line)") }
        }
        return out.joined(separator: "\n")
    }
}
