import StrataStorage

/// How a fetch finds its candidates: a scan of every row, or ranges of one index. The whole
/// predicate is checked on every candidate row either way, so an index only has to narrow.
struct FetchPlan: CustomStringConvertible {
    enum Access {
        case allRows
        /// Key ranges of an index tree, in index order: [lower, upper] by memcmp, where
        /// `upper` is inclusive as a prefix (every key starting with it is in range).
        case index(tree: String, ranges: [(lower: [UInt8], upper: [UInt8]?)], field: Int)
    }

    var access: Access
    /// The index already yields the first sort key's order (ascending): no sort needed.
    var ordered: Bool

    var description: String {
        switch access {
        case .allRows: return "scan all rows"
        case .index(let tree, let ranges, _): return "\(tree): \(ranges.count) range\(ranges.count == 1 ? "" : "s")\(ordered ? ", in order" : "")"
        }
    }

    /// Picks an index for an equality, `IN`, range or prefix condition on its first attribute
    /// among the predicate's top-level `AND` terms (equality and `IN` first); else an index on
    /// the first sort key, for order; else every row.
    static func make(_ request: FetchRequest, entity e: EntityDescription) -> FetchPlan {
        let terms = conjuncts(request.predicate)
        var best: (score: Int, plan: FetchPlan)?
        for (i, fields) in e.indexFields.enumerated() {
            let field = fields[0]
            let name = e.fields[field].name
            let tree = RecordTrees.index(e, i)
            let sortsHere = request.sortDescriptors.first.map { $0.keyPath == name && $0.ascending } ?? false
            for term in terms {
                guard let (score, ranges) = ranges(for: term, field: name, entity: e, fieldIndex: field) else { continue }
                let s = score * 2 + (sortsHere ? 1 : 0)
                if best == nil || s > best!.score {
                    best = (s, FetchPlan(access: .index(tree: tree, ranges: ranges, field: field), ordered: sortsHere && ranges.count == 1))
                }
            }
            if sortsHere && best == nil {
                best = (1, FetchPlan(access: .index(tree: tree, ranges: [([], nil)], field: field), ordered: true))
            }
        }
        return best?.plan ?? FetchPlan(access: .allRows, ordered: false)
    }

    static func conjuncts(_ p: Predicate?) -> [Comparison] {
        switch p {
        case .comparison(let c)?: return [c]
        case .and(let ps)?: return ps.flatMap { conjuncts($0) }
        default: return []
        }
    }

    /// The index ranges that hold every row `term` can accept, with a score (3: equality,
    /// 2: IN, 1: range or prefix), or nil when the term cannot use an index on `field`.
    static func ranges(for term: Comparison, field: String, entity e: EntityDescription, fieldIndex: Int) -> (Int, [(lower: [UInt8], upper: [UInt8]?)])? {
        guard term.quantifier == .direct, case .keyPath(let path) = term.lhs else { return nil }
        // `name BEGINSWITH[cd] x` may use an index on `canonical:(name)`.
        let derived = e.derivedAttributes.first { $0.field == fieldIndex }
        var canonicalOf: String?
        if let derived, case .canonical(.path(let p)) = derived.parsed, p.count == 1 { canonicalOf = p[0] }
        let viaCanonical = path == [canonicalOf ?? "\u{0}"]
        guard path == [field] || viaCanonical else { return nil }
        let folded = term.options.contains(.caseInsensitive) || term.options.contains(.diacriticInsensitive)
        if viaCanonical && !(term.op == .beginsWith || term.op == .equal) { return nil }
        if folded && !(canonicalOf != nil && term.options.isSuperset(of: [.caseInsensitive, .diacriticInsensitive])) { return nil }
        func key(_ v: Value) -> [UInt8] {
            var out: [UInt8] = []
            var v = v
            if canonicalOf != nil && (folded || viaCanonical), case .string(let s) = v { v = .string(TextFolding.canonical(s)) }
            KeyEncoding.append(v, to: &out)
            return out
        }
        let valueStart: [UInt8] = [KeyEncoding.tagValue]
        switch (term.op, term.rhs) {
        case (.equal, .constant(let v)):
            if viaCanonical && !folded { return nil }
            let k = key(v)
            return (3, [(k, k)])
        case (.in, .list(let items)):
            var rs: [(lower: [UInt8], upper: [UInt8]?)] = []
            for case .constant(let v) in items { let k = key(v); rs.append((k, k)) }
            guard rs.count == items.count else { return nil }
            rs.sort { $0.lower.lexicographicallyPrecedes($1.lower) }
            return (2, rs)
        case (.less, .constant(let v)), (.lessOrEqual, .constant(let v)):
            return (1, [(valueStart, key(v))])
        case (.greater, .constant(let v)), (.greaterOrEqual, .constant(let v)):
            return (1, [(key(v), nil)])
        case (.between, .list(let b)):
            guard b.count == 2, case .constant(let lo) = b[0], case .constant(let hi) = b[1] else { return nil }
            return (1, [(key(lo), key(hi))])
        case (.beginsWith, .constant(.string(let s))):
            var k = key(.string(s))
            k.removeLast(2)  // drop the string terminator: every longer string follows
            return (1, [(k, k)])
        default:
            return nil
        }
    }
}
