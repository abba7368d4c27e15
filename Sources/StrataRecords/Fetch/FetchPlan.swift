import StrataStorage

/// How a fetch finds its candidates: a scan of every row, or ranges of one index. The
/// predicate is checked on every candidate row, except the one term (if any) whose index
/// ranges hold exactly the rows it accepts: that term is ``decided`` and not checked again, and
/// when nothing else needs the row the fetch reads only the index.
struct FetchPlan: CustomStringConvertible {
    enum Access {
        case allRows
        /// Key ranges of an index tree, in index order: [lower, upper] by memcmp, where
        /// `upper` is inclusive as a prefix (every key starting with it is in range).
        case index(tree: String, ranges: [(lower: [UInt8], upper: [UInt8]?)], field: Int)
    }

    var access: Access
    /// The index already yields the requested order (one ascending sort key): no sort needed.
    var ordered: Bool
    /// The top-level `AND` term that the index ranges answer exactly.
    var decided: Comparison? = nil

    var description: String {
        switch access {
        case .allRows: return "scan all rows"
        case .index(let tree, let ranges, _):
            return "\(tree): \(ranges.count) range\(ranges.count == 1 ? "" : "s")\(ordered ? ", in order" : "")"
                + (decided == nil ? "" : ", decides a term")
        }
    }

    /// What is left to check on each candidate: the predicate without the decided term
    /// (`nil`: nothing).
    func residual(_ predicate: FetchPredicate?) -> FetchPredicate? {
        guard let predicate, let decided else { return predicate }
        var removed = false
        func strip(_ p: FetchPredicate) -> FetchPredicate? {
            switch p {
            case .comparison(let c) where !removed && c == decided:
                removed = true
                return nil
            case .and(let terms):
                let kept = terms.compactMap(strip)
                return kept.isEmpty ? nil : (kept.count == 1 ? kept[0] : .and(kept))
            default:
                return p
            }
        }
        return strip(predicate)
    }

    /// Picks an index for an equality, `IN`, range or prefix condition on its first attribute
    /// among the predicate's top-level `AND` terms (equality and `IN` first); else an index on
    /// the first sort key, for order; else every row.
    static func make(_ request: FetchRequest, entity e: EntityDescription) -> FetchPlan {
        let terms = conjuncts(request.predicate)
        var best: (score: Int, plan: FetchPlan)?
        for (i, lead) in e.indexLeads.enumerated() {
            let field = lead.field
            let tree = RecordTrees.index(e, i)
            // The index orders by its attribute, ties by primary key: the whole order only when
            // that attribute is the one sort key (ties then go by primary key either way).
            let sortsHere = request.sortDescriptors.count == 1
                && request.sortDescriptors[0].keyPath == lead.name && request.sortDescriptors[0].ascending
            for term in terms {
                guard let (score, ranges, exact) = ranges(for: term, lead) else { continue }
                // An index whose other columns come after the first only narrows: it decides
                // nothing unless it is a single-attribute index.
                let decides = exact && lead.isSingleAttribute
                let s = score * 4 + (decides ? 2 : 0) + (sortsHere ? 1 : 0)
                if best == nil || s > best!.score {
                    best = (s, FetchPlan(access: .index(tree: tree, ranges: ranges, field: field), ordered: sortsHere && ranges.count == 1,
                                         decided: decides ? term : nil))
                }
            }
            if sortsHere && best == nil {
                best = (1, FetchPlan(access: .index(tree: tree, ranges: [([], nil)], field: field), ordered: true))
            }
        }
        return best?.plan ?? FetchPlan(access: .allRows, ordered: false)
    }

    static func conjuncts(_ p: FetchPredicate?) -> [Comparison] {
        switch p {
        case .comparison(let c)?: return [c]
        case .and(let ps)?: return ps.flatMap { conjuncts($0) }
        default: return []
        }
    }

    /// The index ranges that hold every row `term` can accept, with a score (3: equality,
    /// 2: IN, 1: range or prefix) and whether they hold exactly those rows; nil when the term
    /// cannot use an index on `field`.
    ///
    /// Constants become keys in the attribute's own type (an index of doubles holds `3.0`, not
    /// `3`); a constant with no exact conversion (`2.5` for an integer, a double for a decimal)
    /// leaves the term to a scan. A term is exact when the comparison's own semantics agree
    /// with key bytes: equality of uncut keys, and prefixes compared as bytes (`[cd]` on a
    /// `canonical:` index, whose folding is the comparison's, or `[n]`). Swift's grapheme-aware
    /// `hasPrefix` and mixed-type ranges are only narrowed, then checked on each row.
    static func ranges(for term: Comparison, _ lead: IndexLead)
        -> (score: Int, ranges: [(lower: [UInt8], upper: [UInt8]?)], exact: Bool)? {
        guard term.quantifier == .direct, case .keyPath(let path) = term.lhs, path.count == 1 else { return nil }
        // `name BEGINSWITH[cd] x` may use an index on `canonical:(name)`.
        let canonicalOf = lead.canonicalOf
        let viaCanonical = canonicalOf != nil && path[0] == canonicalOf!
        guard path[0] == lead.name || viaCanonical else { return nil }
        let folded = term.options.contains(.caseInsensitive) || term.options.contains(.diacriticInsensitive)
        if viaCanonical && !(term.op == .beginsWith || term.op == .equal) { return nil }
        if folded && !(canonicalOf != nil && term.options.isSuperset(of: [.caseInsensitive, .diacriticInsensitive])) { return nil }
        let foldsKeys = canonicalOf != nil && (folded || viaCanonical)
        let mode = TextMode(term.options)
        // Byte comparison is the term's own: both sides folded alike, or `[n]` with no folding.
        let bytewise: Bool
        switch mode {
        case .folded: bytewise = foldsKeys
        case .exact: bytewise = !foldsKeys
        case .standard: bytewise = false
        }
        let type = lead.type
        var whole = true
        func key(_ v: Value) -> [UInt8]? {
            var v = v
            if case .double(let d) = v, d.isNaN { whole = false }  // NaN equals nothing, not even its own key
            if !v.isNull {
                if type == .decimal, case .double = v { return nil }
                guard let converted = type.coerce(v) else { return nil }
                v = converted
            }
            if foldsKeys, case .string(let s) = v { v = .string(TextFolding.canonical(s)) }
            var out: [UInt8] = []
            if !KeyEncoding.append(v, to: &out) { whole = false }
            return out
        }
        // Equal keys are equal values (strings too: equal bytes are equal strings); folded
        // sides are equal when their bytes are.
        let equalKeysAreEqualValues = mode == .standard && !foldsKeys || bytewise
        let valueStart: [UInt8] = [KeyEncoding.tagValue]
        switch (term.op, term.rhs) {
        case (.equal, .constant(let v)):
            if viaCanonical && !folded { return nil }
            guard let k = key(v) else { return nil }
            return (3, [(k, k)], whole && (equalKeysAreEqualValues))
        case (.in, .list(let items)):
            var rs: [(lower: [UInt8], upper: [UInt8]?)] = []
            for case .constant(let v) in items {
                guard let k = key(v) else { return nil }
                rs.append((k, k))
            }
            guard rs.count == items.count else { return nil }
            rs.sort { $0.lower.lexicographicallyPrecedes($1.lower) }
            return (2, rs, whole && equalKeysAreEqualValues)
        case (.less, .constant(let v)), (.lessOrEqual, .constant(let v)):
            guard let k = key(v) else { return nil }
            return (1, [(valueStart, k)], false)
        case (.greater, .constant(let v)), (.greaterOrEqual, .constant(let v)):
            guard let k = key(v) else { return nil }
            return (1, [(k, nil)], false)
        case (.between, .list(let b)):
            guard b.count == 2, case .constant(let lo) = b[0], case .constant(let hi) = b[1],
                  let l = key(lo), let h = key(hi) else { return nil }
            return (1, [(l, h)], false)
        case (.beginsWith, .constant(.string(let s))):
            guard var k = key(.string(s)) else { return nil }
            k.removeLast(2)  // drop the string terminator: every longer string follows
            return (1, [(k, k)], whole && bytewise)
        default:
            return nil
        }
    }
}
