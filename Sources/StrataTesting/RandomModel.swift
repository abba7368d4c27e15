import Foundation
import StrataRecords

/// Seeded random record models: every attribute type (optional or not, with and without
/// defaults), every validation rule kind (custom rules and patterns that hold ", " included),
/// transient attributes, single and compound uniqueness, indexes, to-one/to-many and
/// many-to-many relationships with every delete rule, and every derived form (`@count`,
/// `@sum`, `@avg`, `@min`, `@max`, `lowercase:`, `uppercase:`, `canonical:`, `now()`, copies
/// through to-one hops, arithmetic), derived attributes reading derived attributes.
///
/// Built so the model is valid (a model the generator makes and ``Model`` refuses is a
/// finding), small (two to four entities), and awkward where the schema text is: property
/// names that are keywords of the text (`optional`, `default`, `validate`, …), expressions with
/// odd spacing. The same seed gives the same model; ``RandomModelWorkload`` drives writes
/// through it.
package enum RandomModel {
    /// The model for `seed` and its declarations (for printing a reproducer).
    package static func make(seed: UInt64) throws -> Model {
        try Model(entities: declarations(seed: seed))
    }

    /// The entities of the model for `seed`.
    package static func declarations(seed: UInt64) -> [Entity] {
        var plan = Plan(rng: SplitMix64(seed: mixSeed(seed, 0x4D4F_4445_4C)))
        plan.build()
        return plan.entities()
    }

    /// Patterns the generator uses: the workload's strings match some of each. Three hold ", ",
    /// which joins rules in the schema text, one followed by a rule keyword (`, min x`, which
    /// is no rule); none holds ", " and a whole rule signature (that one ambiguity of the text
    /// is tested on its own).
    package static let patterns = ["[a-z]+", "[A-Z]{3}-[0-9]+", "(ab|cd)*", "[a-z]+, [a-z]+", "x, maxi|[a-z]*", "ab, min x|[a-z]*", ".*"]

    /// The custom rule every generated model may use, by its name: it refuses values whose text
    /// ends in 7 (`StoredValue.description`), so some workload values fail it.
    package static func customRule(_ name: String) -> ValidationRule {
        .custom(name: name) { v in v.description.hasSuffix("7") ? "ends in 7" : nil }
    }
}

/// The model being drawn: entities as plain lists, turned into declarations at the end.
private struct Plan {
    struct Attr {
        var name: String
        var type: AttributeType
        var optional: Bool
        var defaultValue: StoredValue?
        var rules: [ValidationRule]
        var transient: Bool
    }
    struct Rel {
        var name: String
        var target: Int
        var inverse: String
        var toMany: Bool
        var rule: DeleteRule
        var optional: Bool
    }
    struct Der {
        var name: String
        var type: AttributeType
        var expression: String
        var optional: Bool
    }
    struct Ent {
        var name: String
        var attrs: [Attr] = []
        var rels: [Rel] = []
        var derived: [Der] = []
        var uniques: [[String]] = []
        var indexes: [[String]] = []
        var used = Set<String>()
    }
    /// A value a derived expression can read: its type and whether it can be nil.
    struct Readable {
        var path: String
        var type: AttributeType
        var canBeNil: Bool
    }

    var rng: SplitMix64
    var ents: [Ent] = []

    init(rng: SplitMix64) { self.rng = rng }

    mutating func pick<T>(_ xs: [T]) -> T { xs[rng.below(xs.count)] }

    /// A fresh property name for entity `e`: mostly `pN`, now and then a word of the schema text.
    mutating func name(_ e: Int, _ prefix: String) -> String {
        let keywords = ["optional", "default", "validate", "inverse", "delete", "custom", "pattern", "min", "entity", "transient", "derived", "unique"]
        if rng.chance(0.15) {
            let k = pick(keywords)
            if ents[e].used.insert(k).inserted { return k }
        }
        var n = ents[e].used.count
        while !ents[e].used.insert("\(prefix)\(n)").inserted { n += 1 }
        return "\(prefix)\(n)"
    }

    mutating func build() {
        let count = rng.int(2...4)
        for i in 0..<count { ents.append(Ent(name: i == 1 && rng.chance(0.2) ? "optional" : "E\(i)")) }
        for e in 0..<count {
            for _ in 0..<rng.int(1...5) { addAttribute(e, transient: false) }
            if rng.chance(0.2) { addAttribute(e, transient: true) }
        }
        for _ in 0..<rng.int(1...4) { addRelationship() }
        for _ in 0..<rng.int(1...7) { addDerived() }
        for e in 0..<count { addConstraints(e) }
    }

    // MARK: Attributes

    mutating func addAttribute(_ e: Int, transient: Bool) {
        let type = pick(AttributeType.allCases)
        var a = Attr(name: name(e, "a"), type: type, optional: rng.chance(0.4), defaultValue: nil, rules: [], transient: transient)
        if rng.chance(0.35) {
            // A default the type cannot hold makes the model invalid: draw one that fits.
            var v = RandomValues.value(type, &rng)
            while !RandomValues.fits(v, type) { v = RandomValues.value(type, &rng) }
            a.defaultValue = v
        }
        if rng.chance(0.5) { a.rules = rules(for: type) }
        ents[e].attrs.append(a)
    }

    mutating func rules(for type: AttributeType) -> [ValidationRule] {
        var out: [ValidationRule] = []
        switch type {
        case .int16, .int32, .int64, .double, .decimal, .date:
            if rng.chance(0.6) { out.append(.minimum(pick([-1, 0, 0.5, 2]))) }
            if rng.chance(0.6) { out.append(.maximum(pick([3, 10, 100.25, 1e6]))) }
        case .string:
            if rng.chance(0.4) { out.append(.minimumLength(pick([0, 1, 2]))) }
            if rng.chance(0.4) { out.append(.maximumLength(pick([3, 8, 20]))) }
            if rng.chance(0.5) { out.append(.pattern(pick(RandomModel.patterns))) }
        case .binary:
            if rng.chance(0.5) { out.append(.minimumLength(1)) }
            if rng.chance(0.5) { out.append(.maximumLength(4)) }
        case .bool, .uuid:
            break
        }
        if rng.chance(0.25) { out.append(RandomModel.customRule(pick(["noSeven", "not 7", "odd, or even"]))) }
        // Order matters to the text only: shuffle so a custom or pattern rule comes first too.
        out.shuffle(using: &rng)
        return out
    }

    // MARK: Relationships

    mutating func addRelationship() {
        let a = rng.below(ents.count), b = rng.below(ents.count)
        let rules: [DeleteRule] = [.nullify, .cascade, .deny]
        let forward = name(a, "r"), back = name(b, "r")
        if rng.chance(0.3) {
            // Many-to-many; to its own entity it may not cascade both ways.
            var r1 = pick(rules), r2 = pick(rules)
            if a == b && r1 == .cascade && r2 == .cascade { r2 = .nullify }
            if a == b && r1 == .cascade { r1 = .nullify }
            ents[a].rels.append(Rel(name: forward, target: b, inverse: back, toMany: true, rule: r1, optional: true))
            ents[b].rels.append(Rel(name: back, target: a, inverse: forward, toMany: true, rule: r2, optional: true))
        } else {
            // `forward` is the to-one on a, `back` the to-many on b.
            ents[a].rels.append(Rel(name: forward, target: b, inverse: back, toMany: false, rule: pick(rules), optional: rng.chance(0.75)))
            ents[b].rels.append(Rel(name: back, target: a, inverse: forward, toMany: true, rule: pick(rules), optional: true))
        }
    }

    // MARK: Derived attributes

    /// What entity `e` can read: its stored and derived attributes, and those of the targets of
    /// its to-ones (one hop, two now and then).
    func readable(_ e: Int, hops: Int = 2) -> [Readable] {
        var out: [Readable] = []
        for a in ents[e].attrs where !a.transient { out.append(Readable(path: a.name, type: a.type, canBeNil: a.optional)) }
        for d in ents[e].derived { out.append(Readable(path: d.name, type: d.type, canBeNil: d.optional)) }
        guard hops > 0 else { return out }
        for r in ents[e].rels where !r.toMany {
            for x in readable(r.target, hops: hops - 1) {
                out.append(Readable(path: "\(r.name).\(x.path)", type: x.type, canBeNil: x.canBeNil || r.optional))
            }
        }
        return out
    }

    /// Reading a property named like `min` with spaces around an operator is fine; an
    /// expression sometimes gets extra spaces, at the end too (the text must keep them).
    mutating func spaced(_ s: String) -> String { rng.chance(0.15) ? " \(s) " : s }

    mutating func addDerived() {
        let e = rng.below(ents.count)
        let toMany = ents[e].rels.filter(\.toMany)
        let own = readable(e)
        var d: Plan.Der?
        switch rng.below(8) {
        case 0 where !toMany.isEmpty:
            let r = pick(toMany)
            d = Der(name: "", type: pick([.int64, .int32, .double, .decimal]), expression: "\(r.name).@count", optional: rng.chance(0.1))
        case 1 where !toMany.isEmpty, 2 where !toMany.isEmpty:
            let r = pick(toMany)
            let sources = readable(r.target, hops: 0).filter { !$0.path.contains(".") }
            let f = pick(["sum", "avg", "min", "max"])
            let fit = sources.filter { f == "min" || f == "max" ? ($0.type != .bool && $0.type != .binary) : $0.type.isNumeric }
            guard !fit.isEmpty else { break }
            let s = pick(fit)
            let type: AttributeType
            switch f {
            case "sum": type = s.type.isInteger ? pick([.int64, .double, .decimal]) : (s.type == .double ? pick([.double, .decimal]) : pick([.decimal, .double]))
            case "avg": type = s.type == .decimal ? .decimal : pick([.double, .decimal])
            default: type = s.type.isInteger ? pick([s.type, .int64]) : s.type
            }
            d = Der(name: "", type: type, expression: "\(r.name).\(s.path).@\(f)", optional: f != "sum" || rng.chance(0.1))
        case 3:
            let strings = own.filter { $0.type == .string }
            guard !strings.isEmpty else { break }
            let s = pick(strings)
            d = Der(name: "", type: .string, expression: spaced("\(pick(["lowercase", "uppercase", "canonical"])):(\(s.path))"), optional: s.canBeNil || rng.chance(0.1))
        case 4:
            d = Der(name: "", type: .date, expression: rng.chance(0.8) ? "now()" : "now( )", optional: rng.chance(0.2))
        case 5:
            let hopped = own.filter { $0.path.contains(".") }
            guard !hopped.isEmpty else { break }
            let s = pick(hopped)
            d = Der(name: "", type: s.type, expression: s.path, optional: s.canBeNil || rng.chance(0.1))
        default:
            let numbers = own.filter { $0.type.isNumeric }
            guard !numbers.isEmpty else { break }
            var text = ""
            var types: [AttributeType] = []
            var canBeNil = false
            for k in 0..<rng.int(1...3) {
                if k > 0 {
                    let op = pick(["+", "-", "*", "/"])
                    if op == "/" { canBeNil = true }
                    text += pick([" \(op) ", op])
                }
                if rng.chance(0.25) {
                    let literal = pick(["2", "0.5", "10"])
                    text += literal
                    types.append(literal.contains(".") ? .double : .int64)
                } else {
                    let s = pick(numbers)
                    text += rng.chance(0.15) ? "-\(s.path)" : s.path
                    types.append(s.type)
                    canBeNil = canBeNil || s.canBeNil
                }
            }
            let result: AttributeType = types.contains(.decimal) ? .decimal : (types.contains(.double) ? .double : .int64)
            let type: AttributeType = result == .int64 ? pick([.int64, .int32, .decimal]) : (result == .double ? pick([.double, .decimal]) : .decimal)
            d = Der(name: "", type: type, expression: rng.chance(0.2) ? "(\(text)) * 1" : spaced(text), optional: canBeNil || rng.chance(0.1))
        }
        guard var d else { return }
        d.name = name(e, "d")
        ents[e].derived.append(d)
    }

    // MARK: Uniqueness and indexes

    mutating func addConstraints(_ e: Int) {
        var keyable = ents[e].attrs.filter { !$0.transient }.map(\.name) + ents[e].rels.filter { !$0.toMany }.map(\.name)
        if rng.chance(0.3) { keyable += ents[e].derived.map(\.name) }
        guard !keyable.isEmpty else { return }
        for _ in 0..<rng.int(0...2) {
            let first = pick(keyable)
            var columns = [first]
            if rng.chance(0.4), let second = keyable.filter({ $0 != first }).randomElement(using: &rng) { columns.append(second) }
            if rng.chance(0.5) { ents[e].uniques.append(columns) } else { ents[e].indexes.append(columns) }
        }
    }

    // MARK: Declarations

    func entities() -> [Entity] {
        ents.map { e in
            var members: [EntityMember] = []
            for a in e.attrs {
                members.append(EntityMember(AttributeDescription(a.name, a.type, optional: a.optional, default: a.defaultValue, transient: a.transient, validation: a.rules)))
            }
            for r in e.rels {
                let target = ents[r.target].name
                members.append(EntityMember(r.toMany
                    ? RelationshipDescription(r.name, toMany: target, inverse: r.inverse, deleteRule: r.rule)
                    : RelationshipDescription(r.name, toOne: target, inverse: r.inverse, deleteRule: r.rule, optional: r.optional)))
            }
            for d in e.derived { members.append(EntityMember(DerivedAttributeDescription(d.name, d.type, d.expression, optional: d.optional))) }
            for u in e.uniques { members.append(EntityMember(Unique(u))) }
            for i in e.indexes { members.append(EntityMember(FetchIndex(i))) }
            return Entity(e.name, members: members)
        }
    }
}
