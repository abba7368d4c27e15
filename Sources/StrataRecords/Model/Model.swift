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
    public init(entities declared: [Entity]) throws {
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
}
