import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// An independent reader of the record layer's rows, written from FORMAT.md §12 alone (schema
/// text, row layout with its auxiliary fields, row encoding): it decodes every row of a store
/// the record layer wrote and must agree with what the API reads, byte for byte to the end of
/// each row, and its auxiliary fields must hold the running sums and counts §12 describes.
@Suite struct RowFormatTests {
    static func model() throws -> Model {
        try Model {
            Entity("Shelf") {
                AttributeDescription("name", .string)
                AttributeDescription("opened", .date, optional: true)
                AttributeDescription("code", .uuid, optional: true)
                AttributeDescription("blob", .binary, optional: true)
                AttributeDescription("open", .bool, default: true)
                RelationshipDescription("books", toMany: "Book", inverse: "shelf")
                DerivedAttributeDescription("pages", .int64, "books.pageCount.@sum")
                DerivedAttributeDescription("pagesAsDouble", .double, "books.pageCount.@sum")
                DerivedAttributeDescription("priceAsDouble", .double, "books.price.@sum")
                DerivedAttributeDescription("weight", .double, "books.grams.@sum")
                DerivedAttributeDescription("meanPages", .double, "books.pageCount.@avg", optional: true)
                DerivedAttributeDescription("meanPrice", .decimal, "books.price.@avg", optional: true)
                DerivedAttributeDescription("meanGrams", .double, "books.grams.@avg", optional: true)
                DerivedAttributeDescription("count", .int16, "books.@count")
                DerivedAttributeDescription("lower", .string, "lowercase:(name)")
            }
            Entity("Book") {
                AttributeDescription("title", .string)
                AttributeDescription("pageCount", .int32, default: 1)
                AttributeDescription("price", .decimal, default: 0)
                AttributeDescription("grams", .double, optional: true)
                RelationshipDescription("shelf", toOne: "Shelf", inverse: "books")
                DerivedAttributeDescription("shelfName", .string, "shelf.name", optional: true)
            }
        }
    }

    // MARK: The reader, from FORMAT.md §12

    struct Layout {
        var names: [String] = []
        var types: [String] = []          // attribute types; "key" for to-one
        var kinds: [String] = []          // attribute, to-one, derived, aux
    }

    /// Field layouts by entity, from the schema text alone.
    static func layouts(_ schema: String) -> [String: Layout] {
        var out: [String: Layout] = [:]
        var order: [String] = []
        var targets: [String: String] = [:]       // "E.rel" → target entity
        var derived: [String: [(String, String, String)]] = [:]  // entity → (name, declared type, expression)
        var current = ""
        for line in schema.split(separator: "\n").map(String.init) {
            if line.hasPrefix("entity ") { current = String(line.dropFirst(7)); order.append(current); out[current] = Layout(); continue }
            let t = line.trimmingCharacters(in: .whitespaces)
            guard let colon = t.range(of: ": ") else { continue }
            let head = String(t[..<colon.lowerBound]), body = t[colon.upperBound...].split(separator: " ").map(String.init)
            let field = head.split(separator: ".").last.map(String.init) ?? ""
            switch body[0] {
            case "attribute": out[current]!.names.append(field); out[current]!.types.append(body[1]); out[current]!.kinds.append("attribute")
            case "to-one": out[current]!.names.append(field); out[current]!.types.append("key"); out[current]!.kinds.append("to-one")
            case "derived":
                out[current]!.names.append(field); out[current]!.types.append(body[1]); out[current]!.kinds.append("derived")
                derived[current, default: []].append((field, body[1], String(t[t.range(of: " = ")!.upperBound...])))
            case "relationship": targets["\(current).\(field)"] = body[2]
            default: break
            }
        }
        // Auxiliary fields: per derived attribute in declaration order (§12 table).
        for e in order {
            for (name, declared, expression) in derived[e] ?? [] {
                let parts = expression.split(separator: ".").map(String.init)
                guard parts.count == 3, let f = parts.last, f == "@sum" || f == "@avg",
                      let target = targets["\(e).\(parts[0])"], let t = out[target], let i = t.names.firstIndex(of: parts[1]) else { continue }
                let source = t.types[i]
                let integer = ["int16", "int32", "int64"]
                func aux(_ suffix: String, _ type: String) {
                    out[e]!.names.append("\(name).\(suffix)"); out[e]!.types.append(type); out[e]!.kinds.append("aux")
                }
                let sumType = integer.contains(source) ? "int64" : source
                if f == "@avg" {
                    aux("sum", sumType)
                    aux("count", "int64")
                    if source == "double" { aux("compensation", "double") }
                } else if source == "double" {
                    aux("sum", "double")
                    aux("compensation", "double")
                } else if (integer.contains(sumType) ? "int" : sumType) != (integer.contains(declared) ? "int" : declared) {
                    aux("sum", sumType)
                }
            }
        }
        return out
    }

    struct Bytes {
        let b: [UInt8]
        var at = 0
        mutating func byte() -> UInt8 { defer { at += 1 }; return b[at] }
        mutating func varint() -> UInt64 {
            var v: UInt64 = 0, shift: UInt64 = 0
            while true { let x = byte(); v |= UInt64(x & 0x7F) << shift; if x < 0x80 { return v }; shift += 7 }
        }
        mutating func take(_ n: Int) -> [UInt8] { defer { at += n }; return Array(b[at..<at + n]) }
    }

    static func decodeRow(_ bytes: [UInt8], _ layout: Layout) -> [StoredValue] {
        var r = Bytes(b: bytes)
        #expect(r.byte() == 1, "row version")
        let n = Int(r.varint())
        #expect(n == layout.names.count, "a row written by this layout has all its fields")
        let bitmap = r.take((n + 7) / 8)
        var out: [StoredValue] = []
        for i in 0..<n {
            guard bitmap[i / 8] & (1 << (i % 8)) != 0 else { out.append(.null); continue }
            switch layout.types[i] {
            case "bool": out.append(.bool(r.byte() == 1))
            case "int16", "int32", "int64", "key":
                let z = r.varint()
                out.append(.int(Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))))
            case "double", "date":
                var v: UInt64 = 0
                for (k, x) in r.take(8).enumerated() { v |= UInt64(x) << (8 * UInt64(k)) }
                out.append(layout.types[i] == "double" ? .double(Double(bitPattern: v)) : .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: v))))
            case "decimal":
                let sign = r.byte(), exponent = Int(Int8(bitPattern: r.byte())), count = Int(r.byte())
                var mantissa: UInt128 = 0
                for (k, x) in r.take(count).enumerated() { mantissa |= UInt128(x) << (8 * k) }
                let magnitude = Decimal(sign: .plus, exponent: exponent, significand: Decimal(string: String(mantissa))!)
                out.append(.decimal(sign == 1 ? -magnitude : magnitude))
            case "string": out.append(.string(String(decoding: r.take(Int(r.varint())), as: UTF8.self)))
            case "binary": out.append(.binary(r.take(Int(r.varint()))))
            case "uuid":
                let u = r.take(16)
                out.append(.uuid(UUID(uuid: (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]))))
            default: Issue.record("unknown type \(layout.types[i])")
            }
        }
        #expect(r.at == bytes.count, "the row ends where its last field ends")
        return out
    }

    // MARK: The test

    @Test func rowsDecodeFromTheFormatAlone() throws {
        let store = try makeStore(try Self.model())
        var rng = SplitMix64(seed: 0xF0F0)
        try store.write { tx in
            for s in 0..<4 {
                let shelf = try tx.insert("Shelf", ["name": "Shelf \(s) É", "opened": Date(timeIntervalSinceReferenceDate: Double(s) * 1e6),
                                                    "code": UUID(), "blob": [UInt8(s), 0, 255]])
                for b in 0..<Int(rng.next() % 6) {
                    var values: [String: any ValueConvertible] = ["title": "b\(b)", "pageCount": Int(rng.next() % 900),
                                                                  "price": Decimal(Int(rng.next() % 10_000)) / 100, "shelf": shelf]
                    if rng.next() % 3 != 0 { values["grams"] = Double(rng.next() % 5_000) / 7 }
                    try tx.insert("Book", values)
                }
            }
        }
        try store.write { tx in
            for book in try tx.objects("Book") where rng.next() % 3 == 0 { try tx.delete(book) }
        }
        let schema = try store.storage.read { tx in try tx.tree("records:meta")!.get(Array("schema".utf8))! }
        let layouts = Self.layouts(String(decoding: schema, as: UTF8.self))
        #expect(layouts["Shelf"]!.names.count == 5 + 9 + 1 + 1 + 2 + 2 + 2 + 3)
        var rows: [String: [UInt64: [StoredValue]]] = [:]
        try store.storage.read { tx in
            for entity in ["Shelf", "Book"] {
                let c = try tx.tree("rows:\(entity)")!.makeCursor()
                var ok = try c.first()
                while ok {
                    let key = Array(c.key), value = Array(c.value)
                    #expect(key.count == 8)
                    rows[entity, default: [:]][key.reduce(0) { $0 << 8 | UInt64($1) }] = Self.decodeRow(value, layouts[entity]!)
                    ok = try c.next()
                }
            }
        }
        try store.read { r in
            for (entity, byKey) in rows {
                let layout = layouts[entity]!
                for (pk, fields) in byKey {
                    let id = ObjectID(entity: entity, primaryKey: pk)
                    let api = try r.values(of: id)!
                    for (i, name) in layout.names.enumerated() {
                        switch layout.kinds[i] {
                        case "attribute", "derived": #expect(fields[i] == api[name]!, "\(id).\(name)")
                        case "to-one": #expect(fields[i] == (try r.target(of: name, of: id)).map { .int(Int64($0.primaryKey)) } ?? .null, "\(id).\(name)")
                        default: break
                        }
                    }
                    guard entity == "Shelf" else { continue }
                    // The auxiliary fields hold what §12 says: exact sums and counts of the non-nil values.
                    let books = try r.members(of: "books", of: id).map { try r.values(of: $0)! }
                    func aux(_ name: String) -> StoredValue { fields[layout.names.firstIndex(of: name)!] }
                    let pages = books.compactMap { if case .int(let p)? = $0["pageCount"] { return p }; return nil }.reduce(0, +)
                    let prices = books.compactMap { if case .decimal(let p)? = $0["price"] { return p }; return nil }
                    let grams = books.compactMap { if case .double(let g)? = $0["grams"] { return g }; return nil }
                    #expect(aux("meanPages.sum") == .int(pages) && aux("meanPages.count") == .int(Int64(books.count)), "\(id)")
                    #expect(aux("pagesAsDouble.sum") == .int(pages), "\(id)")
                    #expect(aux("priceAsDouble.sum") == .decimal(prices.reduce(0, +)), "\(id)")
                    #expect(aux("meanPrice.sum") == .decimal(prices.reduce(0, +)) && aux("meanPrice.count") == .int(Int64(prices.count)), "\(id)")
                    #expect(aux("meanGrams.count") == .int(Int64(grams.count)), "\(id)")
                    if case .double(let s) = aux("weight.sum"), case .double(let c) = aux("weight.compensation") {
                        #expect(abs(s + c - grams.reduce(0, +)) <= 1e-9 * max(1, grams.reduce(0, +)), "\(id)")
                    } else {
                        Issue.record("\(id): weight's running sum is not two doubles")
                    }
                }
            }
        }
        #expect(rows["Shelf"]?.count == 4 && (rows["Book"]?.count ?? 0) > 0)
    }
}
