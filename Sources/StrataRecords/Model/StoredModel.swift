import StrataStorage

/// Rebuilds a model from the schema text stored in a file (``Model/schemaLines``), so tools
/// can read a store without the program's Swift model. Defaults are rebuilt; validation rules
/// are not (custom rules are code): a store opened this way is for reading and checking.
enum StoredModel {
    static func parse(_ lines: [String]) throws -> Model {
        var entities: [Entity] = []
        var name: String?
        var members: [EntityMember] = []
        var optionalToOne = Set<String>()
        func flush() {
            if let name { entities.append(Entity(name: name, members: members)) }
            members = []
        }
        func bad(_ line: String) -> StrataError { .corrupt("stored model line '\(line)'", offset: nil) }
        for raw in lines {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("entity ") {
                flush()
                name = String(line.dropFirst(7))
                continue
            }
            guard let entity = name, let colon = line.firstIndex(of: ":") else { throw bad(line) }
            let head = String(line[..<colon])
            let body = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            let words = body.split(separator: " ").map(String.init)
            guard let kind = words.first else { throw bad(line) }
            let property = head.hasPrefix(entity + ".") ? String(head.dropFirst(entity.count + 1)) : ""
            func list() -> [String] {
                guard let open = body.firstIndex(of: "("), let close = body.lastIndex(of: ")") else { return [] }
                return body[body.index(after: open)..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            switch kind {
            case "attribute", "transient":
                guard words.count >= 2, let type = AttributeType(rawValue: words[1]) else { throw bad(line) }
                // `attribute TYPE [optional] [default V] [validate …]`: V is one literal
                // (SchemaLiteral), which may hold spaces, so it is read, not split.
                var defaultValue: Value?
                let afterKind = body.drop { $0 != " " }.drop { $0 == " " }
                let afterType = afterKind.drop { $0 != " " }.drop { $0 == " " }
                let options = afterType.hasPrefix("optional") ? afterType.dropFirst("optional".count).drop { $0 == " " } : afterType
                if options.hasPrefix("default ") {
                    guard let (v, _) = SchemaLiteral.parse(options.dropFirst("default ".count), as: type) else { throw bad(line) }
                    defaultValue = v
                }
                members.append(EntityMember(kind: .attribute(Attribute(property, type, optional: afterType.hasPrefix("optional"),
                                                                       default: defaultValue, transient: kind == "transient"))))
            case "to-one":
                if words.contains("optional") { optionalToOne.insert("\(entity).\(property)") }
            case "derived":
                guard words.count >= 2, let type = AttributeType(rawValue: words[1]), let eq = body.range(of: " = ") else { throw bad(line) }
                members.append(EntityMember(kind: .derived(Derived(property, type, String(body[eq.upperBound...]), optional: words.contains("optional")))))
            case "relationship":
                // relationship to-one|to-many TARGET inverse NAME delete RULE
                guard words.count == 7, let rule = DeleteRule(rawValue: words[6]) else { throw bad(line) }
                if words[1] == "to-one" {
                    members.append(EntityMember(kind: .relationship(Relationship(property, toOne: words[2], inverse: words[4], deleteRule: rule,
                                                                                  optional: optionalToOne.contains("\(entity).\(property)")))))
                } else {
                    members.append(EntityMember(kind: .relationship(Relationship(property, toMany: words[2], inverse: words[4], deleteRule: rule))))
                }
            case "unique":
                members.append(EntityMember(kind: .unique(Unique(list()))))
            case "index":
                members.append(EntityMember(kind: .index(FetchIndex(list()))))
            default:
                throw bad(line)
            }
        }
        flush()
        return try Model(entities: entities)
    }
}

extension Entity {
    init(name: String, members: [EntityMember]) {
        self.name = name
        self.renamingIdentifier = nil
        self.members = members
    }
}


import Foundation
