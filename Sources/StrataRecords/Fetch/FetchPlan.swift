import Foundation
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
        case index(tree: String, ranges: [KeyRange], field: Int)
    }

    var access: Access
    /// The index already yields the requested order (one ascending sort key): no sort needed.
    var ordered: Bool
    /// The top-level `AND` term that the index ranges answer exactly.
    var decided: Comparison? = nil
    /// The term the index ranges were made from, and its index (nil: no term, or a scan):
    /// a prepared fetch makes the ranges again from it for each set of values.
    var term: Comparison? = nil
    var lead: IndexLead? = nil
    /// The index gives the requested order when it is read in one range.
    var sortsHere = false
    /// Whether a term is decided: `decided != nil` as ``make(_:entity:derivedAreCurrent:planning:)``
    /// makes a plan, kept apart because a prepared fetch's plan for given values sets only this
    /// (its residuals are made in advance, and copying the term would retain its parts per run).
    var decides = false

    var description: String {
        switch access {
        case .allRows: return "scan all rows"
        case .index(let tree, let ranges, _):
            return "\(tree): \(ranges.count) range\(ranges.count == 1 ? "" : "s")\(ordered ? ", in order" : "")"
                + (decides ? ", decides a term" : "")
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
    /// the one sort key, for order; else every row.
    ///
    /// `derivedAreCurrent` is false inside a write transaction, where derived values of the
    /// rows it changed are computed only at commit: an index on `canonical:(x)` then stands in
    /// for comparisons on `x` itself no longer (it still answers for the derived attribute,
    /// whose stale value a scan sees too).
    ///
    /// `planning`: the plan of a prepared fetch, whose variables have no values yet. A term over
    /// variables scores as it would with values, stand-ins telling whether it can decide
    /// (equality and `IN` can, ranges cannot, prefixes when they compare bytes), so the plan
    /// picks the index planning with the values would pick. Only a value whose key is inexact
    /// (a string cut to fit, NaN) can make them differ; its ranges, made when values are given,
    /// then decide nothing and the term is checked on every candidate.
    static func make(_ request: FetchRequest, entity e: EntityDescription, derivedAreCurrent: Bool = true,
                     planning: Bool = false) -> FetchPlan {
        guard request.usesIndexes else { return FetchPlan(access: .allRows, ordered: false) }
        let terms = conjuncts(request.predicate)
        var best: (score: Int, plan: FetchPlan)?
        for (i, lead) in e.indexLeads.enumerated() {
            let field = lead.field
            let tree = RecordTrees.index(e, i)
            // A single-attribute index orders by its attribute, ties by primary key: the whole
            // order when that attribute is the one sort key. An index with more columns orders
            // ties by them instead, which is not the fetch's order.
            let sortsHere = lead.isSingleAttribute && request.sortDescriptors.count == 1
                && request.sortDescriptors[0].keyPath == lead.name && request.sortDescriptors[0].ascending
            for term in terms {
                guard let (score, ranges, exact) = ranges(for: term, lead, derivedAreCurrent: derivedAreCurrent,
                                                          planning: planning) else { continue }
                // An index whose other columns come after the first only narrows: it decides
                // nothing unless it is a single-attribute index.
                let decides = exact && lead.isSingleAttribute
                let s = score * 4 + (decides ? 2 : 0) + (sortsHere ? 1 : 0)
                if best == nil || s > best!.score {
                    best = (s, FetchPlan(access: .index(tree: tree, ranges: ranges, field: field), ordered: sortsHere && ranges.count == 1,
                                         decided: decides ? term : nil, term: term, lead: lead, sortsHere: sortsHere,
                                         decides: decides))
                }
            }
            if sortsHere && best == nil {
                best = (1, FetchPlan(access: .index(tree: tree, ranges: [KeyRange([], nil)], field: field), ordered: true, sortsHere: true))
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
    /// Keys hold strings in NFC (FORMAT.md §12), and the comparisons agree with them:
    /// - without options, equal keys are canonically equivalent strings, which is Swift's
    ///   `==`; key order is the order of NFC forms, which is the predicates' `<`. Swift's
    ///   grapheme-aware `hasPrefix` only narrows (a string that starts with the prefix's
    ///   characters starts with its NFC bytes, not always the other way round);
    /// - `[n]` compares NFC bytes, exactly what the keys hold;
    /// - `[cd]` on a `canonical:` index, or on the attribute a `canonical:` index folds, compares
    ///   folded text, exactly what that index holds. Other folded comparisons use no index.
    ///
    /// Constants become keys in the attribute's own type (an index of doubles holds `3.0`, not
    /// `3`) only where that conversion keeps the comparison's meaning (see ``indexConstant``);
    /// otherwise the term is left to a scan. A term is exact when equal keys are equal values
    /// for it (keys that were not cut, no NaN) or, for prefixes, when it compares bytes.
    ///
    /// Variables (`$name`) take their values from `bindings`; one without a value makes the
    /// term unusable, except when `planning`, where any variable stands for a value of the
    /// right kind and only the score counts.
    static func ranges(for term: Comparison, _ lead: IndexLead, derivedAreCurrent: Bool = true,
                       bindings: FetchBindings? = nil, planning: Bool = false)
        -> (score: Int, ranges: [KeyRange], exact: Bool)? {
        guard term.quantifier == .direct, case .keyPath(let path) = term.lhs, path.count == 1 else { return nil }
        // `name BEGINSWITH[cd] x` may use an index on `canonical:(name)`.
        let canonicalOf = derivedAreCurrent ? lead.canonicalOf : nil
        let viaCanonical = canonicalOf != nil && path[0] == canonicalOf!
        guard path[0] == lead.name || viaCanonical else { return nil }
        let foldsKeys: Bool
        // Whether the comparison's own semantics are byte semantics over what the keys hold.
        let bytewise: Bool
        switch TextMode(term.options) {
        case .standard:
            if viaCanonical { return nil }
            foldsKeys = false
            bytewise = false
        case .exact:
            if viaCanonical { return nil }
            foldsKeys = false
            bytewise = true
        case .folded(let c, let d):
            guard canonicalOf != nil, c && d else { return nil }
            if viaCanonical && !(term.op == .beginsWith || term.op == .equal || term.op == .in) { return nil }
            foldsKeys = true
            bytewise = true
        }
        let type = lead.type
        var whole = true
        func key(_ v: StoredValue) -> [UInt8]? {
            var v = v
            // NaN equals nothing, not even its own key.
            if case .double(let d) = v, d.isNaN { whole = false }
            if case .date(let d) = v, d.timeIntervalSinceReferenceDate.isNaN { whole = false }
            if !v.isNull {
                guard let converted = indexConstant(v, for: type) else { return nil }
                v = converted
            }
            if foldsKeys, case .string(let s) = v { v = .string(TextFolding.canonical(s)) }
            var out: [UInt8] = []
            // One allocation: the tag, the bytes, the terminator (escaped NULs may grow it once).
            if case .string(let s) = v { out.reserveCapacity(s.utf8.count + 4) } else { out.reserveCapacity(24) }
            if !KeyEncoding.append(v, to: &out) { whole = false }
            return out
        }
        // A constant, or a variable's value. While planning, a stand-in of the kind the
        // operator takes: its keys are thrown away with the ranges.
        func value(_ x: FetchExpression) -> StoredValue? {
            switch x {
            case .constant(let v): return v
            case .variable(let name): return planning ? (term.op == .beginsWith ? .string("") : .null) : bindings?[name]
            default: return nil
            }
        }
        let valueStart: [UInt8] = [KeyEncoding.tagValue]
        switch term.op {
        case .equal:
            guard let v = value(term.rhs), let k = key(v) else { return nil }
            // Equal keys are equal values in every mode: canonically equivalent strings without
            // options (Swift's `==`), equal folded or NFC bytes with them.
            return (3, [KeyRange(k, k)], whole)
        case .in:
            guard case .list(let items) = term.rhs else { return nil }
            var rs: [KeyRange] = []
            rs.reserveCapacity(items.count)
            for item in items {
                guard let v = value(item), let k = key(v) else { return nil }
                rs.append(KeyRange(k, k))
            }
            rs.sort { $0.lower.lexicographicallyPrecedes($1.lower) }
            return (2, rs, whole)
        case .less, .lessOrEqual:
            guard let v = value(term.rhs), let k = key(v) else { return nil }
            return (1, [KeyRange(valueStart, k)], false)
        case .greater, .greaterOrEqual:
            guard let v = value(term.rhs), let k = key(v) else { return nil }
            return (1, [KeyRange(k, nil)], false)
        case .between:
            guard case .list(let b) = term.rhs, b.count == 2, let lo = value(b[0]), let hi = value(b[1]),
                  let l = key(lo), let h = key(hi) else { return nil }
            return (1, [KeyRange(l, h)], false)
        case .beginsWith:
            guard type == .string, case .string(let s)? = value(term.rhs), var k = key(.string(s)) else { return nil }
            k.removeLast(2)  // drop the string terminator: every longer string follows
            return (1, [KeyRange(k, k)], whole && bytewise)
        default:
            return nil
        }
    }

    /// `v` as a key of an attribute of `type`, when rows of that type compare with `v` exactly
    /// as their keys compare with the converted key; nil otherwise (the term is then scanned).
    ///
    /// Predicates compare an integer with a double as doubles, so a double constant stands for
    /// an integer key only below 2⁵³ in magnitude, where every integer is a distinct double; a
    /// decimal constant becomes an integer key only when it is a whole number in range, and an
    /// integer a double or decimal key always. Doubles never become decimal keys, nor decimals
    /// double keys. Other kinds must match the attribute's.
    static func indexConstant(_ v: StoredValue, for type: AttributeType) -> StoredValue? {
        switch (type, v) {
        case (.bool, .bool), (.string, .string), (.date, .date), (.uuid, .uuid), (.binary, .binary),
             (.double, .double), (.decimal, .decimal):
            return v
        case (.double, .int(let i)):
            return .double(Double(i))
        case (.decimal, .int(let i)):
            return .decimal(Decimal(i))
        case (.int16, _), (.int32, _), (.int64, _):
            guard let range = type.integerRange else { return nil }
            let integer: Int64?
            switch v {
            case .int(let i):
                integer = i
            case .double(let d):
                integer = d.rounded() == d && abs(d) < 9_007_199_254_740_992 ? Int64(d) : nil
            case .decimal(let d):
                let i = NSDecimalNumber(decimal: d).int64Value
                integer = Decimal(i) == d ? i : nil
            default:
                integer = nil
            }
            guard let integer, range.contains(integer) else { return nil }
            return .int(integer)
        default:
            return nil
        }
    }
}
