import StrataStorage

/// A data model: entities, their attributes, relationships, derived attributes, constraints
/// and indexes. Built once, checked completely: a model that cannot work is rejected here
/// with `StrataError.invalidModel` naming the entity, the property and the reason.
public final class Model: Sendable {
    /// The entities, in declaration order; an entity's position is its ``EntityDescription/index``.
    public let entities: [EntityDescription]
    let entityIndex: [String: Int]
    /// Every derived attribute as (entity, index into its `derivedAttributes`), sources first.
    let derivationOrder: [DerivedReference]
    /// Plans of the fetches run against this model, by shape (plans depend on the model only).
    let fetchPlans = FetchPlanCache()
    /// For a model rebuilt from a store's schema text (``RecordStore/init(opening:)``): the
    /// lines it was read from; `nil` for a model built from declarations. The checker compares
    /// a store's text with these, not with ``schemaLines``: a line the text's one ambiguity
    /// makes read back differently (``schemaLinesReadDifferently``) is no damage to the store.
    public let storedSchemaLines: [String]?
    /// The version of the model, 1 unless declared: a label a ``MigrationPlan`` orders its
    /// stages by. A store records the version of the model it holds (FORMAT.md §12) and refuses
    /// a model of a lower version with `StrataError.unsupportedModelVersion`, so a program built
    /// before a migration cannot migrate the store back.
    public let version: Int

    struct DerivedReference: Hashable, Sendable {
        var entity: Int
        var derived: Int
    }

    /// Builds and checks the model declared in `entities`, of `version` (at least 1).
    /// Throws `StrataError.invalidModel`, naming the entity, property and reason, if it cannot work.
    public convenience init(version: Int = 1, @ModelBuilder _ entities: () -> [Entity]) throws {
        try self.init(version: version, entities: entities())
    }

    /// Builds and checks a model of the `declared` entities, of `version` (at least 1).
    /// Throws `StrataError.invalidModel`, naming the entity, property and reason, if it cannot work.
    public convenience init(version: Int = 1, entities declared: [Entity]) throws {
        try self.init(entities: declared, storedSchemaLines: nil, version: version)
    }

    /// Builds and checks a model; `storedSchemaLines` is the schema text it was rebuilt from, if any.
    init(entities declared: [Entity], storedSchemaLines: [String]?, version: Int = 1) throws {
        guard version >= 1 else {
            throw StrataError.invalidArgument("model version \(version) is below 1")
        }
        self.version = version
        self.storedSchemaLines = storedSchemaLines
        var resolver = ModelResolver(declared)
        let resolved = try resolver.resolve()
        self.entities = resolved.entities
        var index: [String: Int] = [:]
        for entity in resolved.entities { index[entity.name] = entity.index }
        self.entityIndex = index
        self.derivationOrder = resolved.order
    }

    /// The entity named `name`.
    public func entity(_ name: String) -> EntityDescription? { entityIndex[name].map { entities[$0] } }

    /// A canonical text of everything that shapes the stored data, one line per property;
    /// stored in the file, and compared on open to list the differences.
    public var schemaLines: [String] {
        var lines: [String] = []
        for entity in entities {
            lines.append("entity \(entity.name)")
            for field in entity.fields where field.kind != .auxiliary {
                let property = "  \(entity.name).\(field.name)"
                let optionalText = field.isOptional ? " optional" : ""
                let defaultText = field.defaultValue.map { " default \(SchemaLiteral.text($0))" } ?? ""
                let rules = field.validation.map(\.signature).joined(separator: ", ")
                let validationText = field.validation.isEmpty ? "" : " validate \(rules)"
                switch field.kind {
                case .attribute:
                    let type = field.type.rawValue
                    let preservedText = field.isPreservedAfterDeletion ? " preserved" : ""
                    lines.append("\(property): attribute \(type)\(optionalText)\(preservedText)\(defaultText)"
                        + validationText)
                case .toOne(let target):
                    lines.append("\(property): to-one \(entities[target].name)\(optionalText)")
                case .derived:
                    let derived = entity.derivedAttributes.first { $0.name == field.name }!
                    lines.append("\(property): derived \(field.type.rawValue)\(optionalText) = \(derived.expression)")
                case .auxiliary: break
                }
            }
            for attribute in entity.attributes where attribute.isTransient {
                lines.append("  \(entity.name).\(attribute.name): transient \(attribute.type.rawValue)")
            }
            for relationship in entity.relationships {
                let kind = relationship.isToMany ? "to-many" : "to-one"
                lines.append("  \(entity.name).\(relationship.name): relationship \(kind) \(relationship.target) "
                             + "inverse \(relationship.inverse) delete \(relationship.deleteRule.rawValue)")
            }
            for unique in entity.uniquenessConstraints {
                lines.append("  \(entity.name): unique (\(unique.joined(separator: ", ")))")
            }
            for index in entity.indexes { lines.append("  \(entity.name): index (\(index.joined(separator: ", ")))") }
            for index in entity.fullTextIndexes {
                lines.append("  \(entity.name): fulltext (\(index.joined(separator: ", ")))")
            }
        }
        return lines
    }

    /// For a model rebuilt from a store's schema text: the stored lines it prints otherwise
    /// (in ``schemaLines``), as "stored: LINE" and "reads back as: LINE". Empty for a model
    /// built from declarations, and for every text this version writes except one whose
    /// pattern or custom rule name holds ", " and a whole rule signature (FORMAT.md §12,
    /// "Schema text"): `strata check` prints these as notes, not problems.
    public var schemaLinesReadDifferently: [String] {
        guard let stored = storedSchemaLines?.filter({ !$0.isEmpty }) else { return [] }
        let printed = schemaLines
        guard stored != printed else { return [] }
        let old = Set(stored), new = Set(printed)
        var out = stored.filter { !new.contains($0) }.map { "stored: \($0.trimmingCharacters(in: .whitespaces))" }
        out += printed.filter { !old.contains($0) }.map { "reads back as: \($0.trimmingCharacters(in: .whitespaces))" }
        return out.isEmpty ? ["the stored lines read back in another order"] : out
    }
}
