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
    package static let patterns = ["[a-z]+", "[A-Z]{3}-[0-9]+", "(ab|cd)*", "[a-z]+, [a-z]+", "x, maxi|[a-z]*",
                                   "ab, min x|[a-z]*", ".*"]

    /// The custom rule every generated model may use, by its name: it refuses values whose text
    /// ends in 7 (`StoredValue.description`), so some workload values fail it.
    package static func customRule(_ name: String) -> ValidationRule {
        .custom(name: name) { value in value.description.hasSuffix("7") ? "ends in 7" : nil }
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

    mutating func pick<T>(_ choices: [T]) -> T { choices[rng.below(choices.count)] }

    /// A fresh property name for `entity`: mostly `pN`, now and then a word of the schema text.
    mutating func name(_ entity: Int, _ prefix: String) -> String {
        let keywords = ["optional", "default", "validate", "inverse", "delete", "custom", "pattern", "min", "entity",
                        "transient", "derived", "unique"]
        if rng.chance(0.15) {
            let keyword = pick(keywords)
            if ents[entity].used.insert(keyword).inserted { return keyword }
        }
        var n = ents[entity].used.count
        while !ents[entity].used.insert("\(prefix)\(n)").inserted { n += 1 }
        return "\(prefix)\(n)"
    }

    mutating func build() {
        let count = rng.int(2...4)
        for i in 0..<count { ents.append(Ent(name: i == 1 && rng.chance(0.2) ? "optional" : "E\(i)")) }
        for entity in 0..<count {
            for _ in 0..<rng.int(1...5) { addAttribute(entity, transient: false) }
            if rng.chance(0.2) { addAttribute(entity, transient: true) }
        }
        for _ in 0..<rng.int(1...4) { addRelationship() }
        for _ in 0..<rng.int(1...7) { addDerived() }
        for entity in 0..<count { addConstraints(entity) }
    }

    // MARK: Attributes

    mutating func addAttribute(_ entity: Int, transient: Bool) {
        let type = pick(AttributeType.allCases)
        var attribute = Attr(name: name(entity, "a"), type: type, optional: rng.chance(0.4), defaultValue: nil,
                             rules: [], transient: transient)
        if rng.chance(0.35) {
            // A default the type cannot hold makes the model invalid: draw one that fits.
            var value = RandomValues.value(type, &rng)
            while !RandomValues.fits(value, type) { value = RandomValues.value(type, &rng) }
            attribute.defaultValue = value
        }
        if rng.chance(0.5) { attribute.rules = rules(for: type) }
        ents[entity].attrs.append(attribute)
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
        let owner = rng.below(ents.count), other = rng.below(ents.count)
        let rules: [DeleteRule] = [.nullify, .cascade, .deny]
        let forward = name(owner, "r"), back = name(other, "r")
        if rng.chance(0.3) {
            // Many-to-many; to its own entity it may not cascade both ways.
            var forwardRule = pick(rules), backRule = pick(rules)
            if owner == other && forwardRule == .cascade && backRule == .cascade { backRule = .nullify }
            if owner == other && forwardRule == .cascade { forwardRule = .nullify }
            ents[owner].rels.append(Rel(name: forward, target: other, inverse: back, toMany: true, rule: forwardRule,
                                        optional: true))
            ents[other].rels.append(Rel(name: back, target: owner, inverse: forward, toMany: true, rule: backRule,
                                        optional: true))
        } else {
            // `forward` is the to-one on a, `back` the to-many on b.
            ents[owner].rels.append(Rel(name: forward, target: other, inverse: back, toMany: false, rule: pick(rules),
                                        optional: rng.chance(0.75)))
            ents[other].rels.append(Rel(name: back, target: owner, inverse: forward, toMany: true, rule: pick(rules),
                                        optional: true))
        }
    }

    // MARK: Derived attributes

    /// What `entity` can read: its stored and derived attributes, and those of the targets of
    /// its to-ones (one hop, two now and then).
    func readable(_ entity: Int, hops: Int = 2) -> [Readable] {
        var out: [Readable] = []
        for attribute in ents[entity].attrs where !attribute.transient {
            out.append(Readable(path: attribute.name, type: attribute.type, canBeNil: attribute.optional))
        }
        for derived in ents[entity].derived {
            out.append(Readable(path: derived.name, type: derived.type, canBeNil: derived.optional))
        }
        guard hops > 0 else { return out }
        for relationship in ents[entity].rels where !relationship.toMany {
            for reached in readable(relationship.target, hops: hops - 1) {
                out.append(Readable(path: "\(relationship.name).\(reached.path)", type: reached.type,
                                    canBeNil: reached.canBeNil || relationship.optional))
            }
        }
        return out
    }

    /// Reading a property named like `min` with spaces around an operator is fine; an
    /// expression sometimes gets extra spaces, at the end too (the text must keep them).
    mutating func spaced(_ text: String) -> String { rng.chance(0.15) ? " \(text) " : text }

    mutating func addDerived() {
        let entity = rng.below(ents.count)
        let toMany = ents[entity].rels.filter(\.toMany)
        let own = readable(entity)
        var derived: Plan.Der?
        switch rng.below(8) {
        case 0 where !toMany.isEmpty:
            let relationship = pick(toMany)
            derived = Der(name: "", type: pick([.int64, .int32, .double, .decimal]),
                          expression: "\(relationship.name).@count", optional: rng.chance(0.1))
        case 1 where !toMany.isEmpty, 2 where !toMany.isEmpty:
            let relationship = pick(toMany)
            let sources = readable(relationship.target, hops: 0).filter { !$0.path.contains(".") }
            let function = pick(["sum", "avg", "min", "max"])
            let fit = sources.filter {
                function == "min" || function == "max" ? ($0.type != .bool && $0.type != .binary) : $0.type.isNumeric
            }
            guard !fit.isEmpty else { break }
            let source = pick(fit)
            let type: AttributeType
            switch function {
            case "sum":
                type = source.type.isInteger ? pick([.int64, .double, .decimal])
                    : (source.type == .double ? pick([.double, .decimal]) : pick([.decimal, .double]))
            case "avg": type = source.type == .decimal ? .decimal : pick([.double, .decimal])
            default: type = source.type.isInteger ? pick([source.type, .int64]) : source.type
            }
            derived = Der(name: "", type: type, expression: "\(relationship.name).\(source.path).@\(function)",
                          optional: function != "sum" || rng.chance(0.1))
        case 3:
            let strings = own.filter { $0.type == .string }
            guard !strings.isEmpty else { break }
            let source = pick(strings)
            derived = Der(name: "", type: .string,
                          expression: spaced("\(pick(["lowercase", "uppercase", "canonical"])):(\(source.path))"),
                          optional: source.canBeNil || rng.chance(0.1))
        case 4:
            derived = Der(name: "", type: .date, expression: rng.chance(0.8) ? "now()" : "now( )",
                          optional: rng.chance(0.2))
        case 5:
            let hopped = own.filter { $0.path.contains(".") }
            guard !hopped.isEmpty else { break }
            let source = pick(hopped)
            derived = Der(name: "", type: source.type, expression: source.path,
                          optional: source.canBeNil || rng.chance(0.1))
        default:
            let numbers = own.filter { $0.type.isNumeric }
            guard !numbers.isEmpty else { break }
            var text = ""
            var types: [AttributeType] = []
            var canBeNil = false
            for term in 0..<rng.int(1...3) {
                if term > 0 {
                    let op = pick(["+", "-", "*", "/"])
                    if op == "/" { canBeNil = true }
                    text += pick([" \(op) ", op])
                }
                if rng.chance(0.25) {
                    let literal = pick(["2", "0.5", "10"])
                    text += literal
                    types.append(literal.contains(".") ? .double : .int64)
                } else {
                    let source = pick(numbers)
                    text += rng.chance(0.15) ? "-\(source.path)" : source.path
                    types.append(source.type)
                    canBeNil = canBeNil || source.canBeNil
                }
            }
            let result: AttributeType = types.contains(.decimal)
                ? .decimal : (types.contains(.double) ? .double : .int64)
            let type: AttributeType = result == .int64
                ? pick([.int64, .int32, .decimal]) : (result == .double ? pick([.double, .decimal]) : .decimal)
            derived = Der(name: "", type: type, expression: rng.chance(0.2) ? "(\(text)) * 1" : spaced(text),
                          optional: canBeNil || rng.chance(0.1))
        }
        guard var derived else { return }
        derived.name = name(entity, "d")
        ents[entity].derived.append(derived)
    }

    // MARK: Uniqueness and indexes

    mutating func addConstraints(_ entity: Int) {
        var keyable = ents[entity].attrs.filter { !$0.transient }.map(\.name)
            + ents[entity].rels.filter { !$0.toMany }.map(\.name)
        if rng.chance(0.3) { keyable += ents[entity].derived.map(\.name) }
        guard !keyable.isEmpty else { return }
        for _ in 0..<rng.int(0...2) {
            let first = pick(keyable)
            var columns = [first]
            if rng.chance(0.4), let second = keyable.filter({ $0 != first }).randomElement(using: &rng) {
                columns.append(second)
            }
            if rng.chance(0.5) { ents[entity].uniques.append(columns) } else { ents[entity].indexes.append(columns) }
        }
    }

    // MARK: Declarations

    func entities() -> [Entity] {
        ents.map { entity in
            var members: [EntityMember] = []
            for attribute in entity.attrs {
                members.append(EntityMember(AttributeDescription(
                    attribute.name, attribute.type, optional: attribute.optional, default: attribute.defaultValue,
                    transient: attribute.transient, validation: attribute.rules)))
            }
            for relationship in entity.rels {
                let target = ents[relationship.target].name
                members.append(EntityMember(relationship.toMany
                    ? RelationshipDescription(relationship.name, toMany: target, inverse: relationship.inverse,
                                              deleteRule: relationship.rule)
                    : RelationshipDescription(relationship.name, toOne: target, inverse: relationship.inverse,
                                              deleteRule: relationship.rule, optional: relationship.optional)))
            }
            for derived in entity.derived {
                members.append(EntityMember(DerivedAttributeDescription(derived.name, derived.type, derived.expression,
                                                                        optional: derived.optional)))
            }
            for unique in entity.uniques { members.append(EntityMember(Unique(unique))) }
            for fetchIndex in entity.indexes { members.append(EntityMember(FetchIndex(fetchIndex))) }
            return Entity(entity.name, members: members)
        }
    }
}
