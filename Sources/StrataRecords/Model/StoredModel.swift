import StrataStorage

/// Rebuilds a model from the schema text stored in a file (``Model/schemaLines``), so tools
/// can read a store without the program's Swift model.
///
/// Defaults and validation rules are rebuilt from their literals and signatures, so a model
/// read from a file prints the lines it was read from (the checker compares them). One thing
/// cannot come back: a `custom NAME` rule is code in the program, so it returns as a custom
/// rule of that name that accepts every value. A store opened this way is for reading and
/// checking; a write through it skips the program's custom rules.
///
/// One ambiguity remains in the text (FORMAT.md §12, "Schema text"): rules are joined with
/// ", ", and a pattern or custom name that itself holds ", " followed by a rule keyword reads
/// back as two rules. The model keeps the text it was read from (``Model/storedSchemaLines``),
/// so such a line is a note for the tool, never a problem the checker reports.
enum StoredModel {
    static func parse(_ lines: [String], version: Int = 1) throws -> Model {
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
            // Only the indentation goes: trailing spaces can belong to a derived expression or
            // a pattern, and the line must print back as it was read.
            let line = String(raw.drop { $0 == " " || $0 == "\t" })
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            if line.hasPrefix("entity ") {
                flush()
                name = String(line.dropFirst(7))
                continue
            }
            guard let entity = name, let colon = line.firstIndex(of: ":") else { throw bad(line) }
            let head = String(line[..<colon])
            let body = line[line.index(after: colon)...].drop { $0 == " " }
            let words = body.split(separator: " ").map(String.init)
            guard let kind = words.first else { throw bad(line) }
            let property = head.hasPrefix(entity + ".") ? String(head.dropFirst(entity.count + 1)) : ""
            func list() -> [String] {
                guard let open = body.firstIndex(of: "("), let close = body.lastIndex(of: ")") else { return [] }
                return body[body.index(after: open)..<close].split(separator: ",")
                    .map { $0.trimmingCharacters(in: .whitespaces) }
            }
            switch kind {
            case "attribute", "transient":
                guard words.count >= 2, let type = AttributeType(rawValue: words[1]) else { throw bad(line) }
                // `attribute TYPE [optional] [preserved] [default V] [validate …]`: V is one literal
                // (SchemaLiteral), which may hold spaces, so it is read, not split.
                var defaultValue: StoredValue?
                var validation: [ValidationRule] = []
                let afterKind = body.drop { $0 != " " }.drop { $0 == " " }
                let afterType = afterKind.drop { $0 != " " }.drop { $0 == " " }
                let isOptional = afterType == "optional" || afterType.hasPrefix("optional ")
                var options = isOptional ? afterType.dropFirst("optional".count).drop { $0 == " " } : afterType
                let isPreserved = kind == "attribute" && (options == "preserved" || options.hasPrefix("preserved "))
                if isPreserved { options = options.dropFirst("preserved".count).drop { $0 == " " } }
                if options.hasPrefix("default ") {
                    guard let (value, rest) = SchemaLiteral.parse(options.dropFirst("default ".count), as: type) else {
                        throw bad(line)
                    }
                    defaultValue = value
                    options = rest.drop { $0 == " " }
                }
                if kind == "attribute", options.hasPrefix("validate ") {
                    guard let rules = ValidationRule.rules(signatures: options.dropFirst("validate ".count)) else {
                        throw bad(line)
                    }
                    validation = rules
                }
                let attribute = AttributeDescription(property, type, optional: isOptional, default: defaultValue,
                                                     transient: kind == "transient", validation: validation,
                                                     preservedAfterDeletion: isPreserved)
                members.append(EntityMember(kind: .attribute(attribute)))
            case "to-one":
                // `to-one TARGET [optional]`: the target may itself be named `optional`.
                if words.dropFirst(2).contains("optional") { optionalToOne.insert("\(entity).\(property)") }
            case "derived":
                // `derived TYPE [optional] = EXPRESSION`: only the words before ` = ` are options
                // (the expression may name a property `optional`, and keeps its spaces).
                guard words.count >= 2, let type = AttributeType(rawValue: words[1]),
                      let eq = body.range(of: " = ") else { throw bad(line) }
                let isOptional = body[..<eq.lowerBound].split(separator: " ").dropFirst(2).contains("optional")
                let expression = String(body[eq.upperBound...])
                let derived = DerivedAttributeDescription(property, type, expression, optional: isOptional)
                members.append(EntityMember(kind: .derived(derived)))
            case "relationship":
                // relationship to-one|to-many TARGET inverse NAME delete RULE
                guard words.count == 7, let rule = DeleteRule(rawValue: words[6]) else { throw bad(line) }
                if words[1] == "to-one" {
                    let isOptional = optionalToOne.contains("\(entity).\(property)")
                    let relationship = RelationshipDescription(property, toOne: words[2], inverse: words[4],
                                                               deleteRule: rule, optional: isOptional)
                    members.append(EntityMember(kind: .relationship(relationship)))
                } else {
                    let relationship = RelationshipDescription(property, toMany: words[2], inverse: words[4],
                                                               deleteRule: rule)
                    members.append(EntityMember(kind: .relationship(relationship)))
                }
            case "unique":
                members.append(EntityMember(kind: .unique(Unique(list()))))
            case "index":
                members.append(EntityMember(kind: .index(FetchIndex(list()))))
            case "fulltext":
                members.append(EntityMember(kind: .fullText(FullTextIndex(list()))))
            default:
                throw bad(line)
            }
        }
        flush()
        return try Model(entities: entities, storedSchemaLines: lines, version: version)
    }
}

extension Entity {
    init(name: String, members: [EntityMember]) {
        self.name = name
        self.renamingIdentifier = nil
        self.members = members
    }
}

extension Model {
    /// The model a schema text describes (``schemaLines`` joined by newlines, as a store or a
    /// replication keeps it), for a tool that makes a store without the program's model: the
    /// program's custom validation rules come back as rules that accept every value, so the
    /// program opens the store with its own model afterwards.
    package static func reading(schemaText: String, version: Int = 1) throws -> Model {
        try StoredModel.parse(schemaText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init),
                              version: version)
    }
}
