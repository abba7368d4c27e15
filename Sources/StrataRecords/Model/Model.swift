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

    struct DerivedReference: Hashable, Sendable {
        var entity: Int
        var derived: Int
    }

    /// Builds and checks the model declared in `entities`.
    /// Throws `StrataError.invalidModel`, naming the entity, property and reason, if it cannot work.
    public convenience init(@ModelBuilder _ entities: () -> [Entity]) throws {
        try self.init(entities: entities())
    }

    /// Builds and checks a model of the `declared` entities.
    /// Throws `StrataError.invalidModel`, naming the entity, property and reason, if it cannot work.
    public convenience init(entities declared: [Entity]) throws {
        try self.init(entities: declared, storedSchemaLines: nil)
    }

    /// Builds and checks a model; `storedSchemaLines` is the schema text it was rebuilt from, if any.
    init(entities declared: [Entity], storedSchemaLines: [String]?) throws {
        self.storedSchemaLines = storedSchemaLines
        var resolver = ModelResolver(declared)
        let resolved = try resolver.resolve()
        self.entities = resolved.entities
        var index: [String: Int] = [:]
        for e in resolved.entities { index[e.name] = e.index }
        self.entityIndex = index
        self.derivationOrder = resolved.order
    }

    /// The entity named `name`.
    public func entity(_ name: String) -> EntityDescription? { entityIndex[name].map { entities[$0] } }

    /// A canonical text of everything that shapes the stored data, one line per property;
    /// stored in the file, and compared on open to list the differences.
    public var schemaLines: [String] {
        var lines: [String] = []
        for e in entities {
            lines.append("entity \(e.name)")
            for f in e.fields where f.kind != .auxiliary {
                let d = f.defaultValue.map { " default \(SchemaLiteral.text($0))" } ?? ""
                let v = f.validation.isEmpty ? "" : " validate \(f.validation.map(\.signature).joined(separator: ", "))"
                switch f.kind {
                case .attribute: lines.append("  \(e.name).\(f.name): attribute \(f.type.rawValue)\(f.isOptional ? " optional" : "")\(d)\(v)")
                case .toOne(let t): lines.append("  \(e.name).\(f.name): to-one \(entities[t].name)\(f.isOptional ? " optional" : "")")
                case .derived:
                    let dd = e.derivedAttributes.first { $0.name == f.name }!
                    lines.append("  \(e.name).\(f.name): derived \(f.type.rawValue)\(f.isOptional ? " optional" : "") = \(dd.expression)")
                case .auxiliary: break
                }
            }
            for a in e.attributes where a.isTransient { lines.append("  \(e.name).\(a.name): transient \(a.type.rawValue)") }
            for r in e.relationships {
                lines.append("  \(e.name).\(r.name): relationship \(r.isToMany ? "to-many" : "to-one") \(r.target) inverse \(r.inverse) delete \(r.deleteRule.rawValue)")
            }
            for u in e.uniquenessConstraints { lines.append("  \(e.name): unique (\(u.joined(separator: ", ")))") }
            for i in e.indexes { lines.append("  \(e.name): index (\(i.joined(separator: ", ")))") }
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
