#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
        /// The rows a word index's entries give for a `CONTAINSWORDS`/`CONTAINSANYWORD` term,
        /// in primary-key order, counting the properties `searched` marks. `query` is nil while
        /// a prepared fetch is planned without its values (it is made from them for each run).
        case words(tree: String, query: WordQuery?, searched: [Bool])
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
        case .words(let tree, let query, _):
            let count = query?.terms.count ?? 0
            let match = query?.match == .anyWord ? "any" : "all"
            return "\(tree): \(match) of \(count) word\(count == 1 ? "" : "s")" + (decides ? ", decides a term" : "")
        }
    }

    /// What is left to check on each candidate: the predicate without the decided term
    /// (`nil`: nothing).
    func residual(_ predicate: FetchPredicate?) -> FetchPredicate? {
        guard let predicate, let decided else { return predicate }
        var removed = false
        func strip(_ node: FetchPredicate) -> FetchPredicate? {
            switch node {
            case .comparison(let comparison) where !removed && comparison == decided:
                removed = true
                return nil
            case .and(let terms):
                let kept = terms.compactMap(strip)
                return kept.isEmpty ? nil : (kept.count == 1 ? kept[0] : .and(kept))
            default:
                return node
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
    static func make(_ request: FetchRequest, entity: EntityDescription, derivedAreCurrent: Bool = true,
                     planning: Bool = false) -> FetchPlan {
        guard request.usesIndexes else { return FetchPlan(access: .allRows, ordered: false) }
        let terms = conjuncts(request.predicate)
        var best: (score: Int, plan: FetchPlan)?
        for (i, lead) in entity.indexLeads.enumerated() {
            let field = lead.field
            let tree = RecordTrees.index(entity, i)
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
                let candidateScore = score * 4 + (decides ? 2 : 0) + (sortsHere ? 1 : 0)
                if best == nil || candidateScore > best!.score {
                    best = (candidateScore,
                            FetchPlan(access: .index(tree: tree, ranges: ranges, field: field),
                                      ordered: sortsHere && ranges.count == 1, decided: decides ? term : nil,
                                      term: term, lead: lead, sortsHere: sortsHere, decides: decides))
                }
            }
            if sortsHere && best == nil {
                best = (1, FetchPlan(access: .index(tree: tree, ranges: [KeyRange([], nil)], field: field),
                                     ordered: true, sortsHere: true))
            }
        }
        // A word term, through a word index over its properties (or over more: its entries
        // count each property apart, so it still decides the term). It ranks below an exact
        // equality, whose index range is at most as long as any.
        for term in terms where term.op.matchesWords {
            guard let words = words(for: term, entity: entity, planning: planning) else { continue }
            if best == nil || 13 > best!.score {
                best = (13, FetchPlan(access: .words(tree: words.tree, query: words.query, searched: words.searched),
                                      ordered: false, decided: term, term: term, decides: true))
            }
        }
        return best?.plan ?? FetchPlan(access: .allRows, ordered: false)
    }

    /// The word index that answers `term` (`CONTAINSWORDS`/`CONTAINSANYWORD`; see
    /// ``EntityDescription/wordIndex(covering:)``), with the term's words: nil while `planning`
    /// a variable. Nil when no word index covers the term, or its value holds no word (the
    /// fetch then fails its check).
    static func words(for term: Comparison, entity: EntityDescription, bindings: FetchBindings? = nil,
                      planning: Bool = false) -> (tree: String, query: WordQuery?, searched: [Bool])? {
        guard term.quantifier == .direct, term.options.isEmpty, let properties = term.lhs.wordProperties,
              let (position, searched) = entity.wordIndex(covering: properties) else { return nil }
        let match: TextSearch.Match = term.op == .containsWords ? .allWords : .anyWord
        let text: String?
        switch term.rhs {
        case .constant(.string(let string)): text = string
        case .variable(let name):
            if planning {
                text = nil
            } else if case .string(let string)? = bindings?[name] {
                text = string
            } else {
                return nil
            }
        default: return nil
        }
        let tree = RecordTrees.words(entity, position)
        guard let text else { return (tree, nil, searched) }
        guard let query = try? WordQuery(text, match: match) else { return nil }
        return (tree, query, searched)
    }

    static func conjuncts(_ predicate: FetchPredicate?) -> [Comparison] {
        switch predicate {
        case .comparison(let comparison)?: return [comparison]
        case .and(let terms)?: return terms.flatMap { conjuncts($0) }
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
        case .folded(let caseInsensitive, let diacriticInsensitive):
            guard canonicalOf != nil, caseInsensitive && diacriticInsensitive else { return nil }
            if viaCanonical && !(term.op == .beginsWith || term.op == .equal || term.op == .in) { return nil }
            foldsKeys = true
            bytewise = true
        }
        let type = lead.type
        var whole = true
        func key(_ constant: StoredValue) -> [UInt8]? {
            guard let (encoded, isWhole) = indexKey(constant, for: type, folding: foldsKeys) else { return nil }
            if !isWhole { whole = false }
            return encoded
        }
        // A constant, or a variable's value. While planning, a stand-in of the kind the
        // operator takes: its keys are thrown away with the ranges.
        func value(_ expression: FetchExpression) -> StoredValue? {
            switch expression {
            case .constant(let constant): return constant
            case .variable(let name): return planning ? (term.op == .beginsWith ? .string("") : .null) : bindings?[name]
            default: return nil
            }
        }
        let valueStart: [UInt8] = [KeyEncoding.tagValue]
        switch term.op {
        case .equal:
            guard let constant = value(term.rhs), let encoded = key(constant) else { return nil }
            // Equal keys are equal values in every mode: canonically equivalent strings without
            // options (Swift's `==`), equal folded or NFC bytes with them.
            return (3, [KeyRange(encoded, encoded)], whole)
        case .in:
            guard case .list(let items) = term.rhs else { return nil }
            var ranges: [KeyRange] = []
            ranges.reserveCapacity(items.count)
            for item in items {
                guard let constant = value(item), let encoded = key(constant) else { return nil }
                ranges.append(KeyRange(encoded, encoded))
            }
            ranges.sort { $0.lower.lexicographicallyPrecedes($1.lower) }
            return (2, ranges, whole)
        case .less, .lessOrEqual:
            guard let constant = value(term.rhs), let encoded = key(constant) else { return nil }
            return (1, [KeyRange(valueStart, encoded)], false)
        case .greater, .greaterOrEqual:
            guard let constant = value(term.rhs), let encoded = key(constant) else { return nil }
            return (1, [KeyRange(encoded, nil)], false)
        case .between:
            guard case .list(let bounds) = term.rhs, bounds.count == 2, let low = value(bounds[0]),
                  let high = value(bounds[1]),
                  let lowKey = key(low), let highKey = key(high) else { return nil }
            return (1, [KeyRange(lowKey, highKey)], false)
        case .beginsWith:
            guard type == .string, case .string(let prefix)? = value(term.rhs),
                  var encoded = key(.string(prefix)) else { return nil }
            encoded.removeLast(2)  // drop the string terminator: every longer string follows
            return (1, [KeyRange(encoded, encoded)], whole && bytewise)
        default:
            return nil
        }
    }

    /// The key bytes of `constant` in an index of values of `type` (folded by `canonical:` when
    /// `folding`), and whether they stand for it whole: not when it is NaN (which equals
    /// nothing, not even its own key) or was cut to fit a key. Nil when the index cannot hold
    /// it (``indexConstant(_:for:)``).
    @inline(__always)
    static func indexKey(_ constant: StoredValue, for type: AttributeType,
                         folding: Bool) -> (bytes: [UInt8], whole: Bool)? {
        var out: [UInt8] = []
        guard let whole = appendIndexKey(constant, for: type, folding: folding, to: &out) else { return nil }
        return (out, whole)
    }

    /// ``indexKey(_:for:folding:)`` appended to `out` (a buffer kept between runs); nil when
    /// the constant has no key in an index of `type`, else whether it went in whole.
    static func appendIndexKey(_ constant: StoredValue, for type: AttributeType, folding: Bool,
                               to out: inout [UInt8]) -> Bool? {
        // The usual probe, a plain string for a string index, goes in as it is.
        if !folding, type == .string, case .string(let string) = constant,
           KeyEncoding.appendPlainASCII(string, to: &out) {
            return true
        }
        var keyed = constant
        var whole = true
        if case .double(let double) = keyed, double.isNaN { whole = false }
        if case .date(let date) = keyed, date.timeIntervalSinceReferenceDate.isNaN { whole = false }
        if !keyed.isNull {
            guard let converted = indexConstant(keyed, for: type) else { return nil }
            keyed = converted
        }
        if folding, case .string(let string) = keyed { keyed = .string(TextFolding.canonical(string)) }
        // At most one allocation: the tag, the bytes, the terminator (escaped NULs may grow it
        // once).
        let room: Int
        if case .string(let string) = keyed { room = string.utf8.count + 4 } else { room = 24 }
        if out.capacity - out.count < room { out.reserveCapacity(out.count + room) }
        if !KeyEncoding.append(keyed, to: &out) { whole = false }
        return whole
    }

    /// `value` as a key of an attribute of `type`, when rows of that type compare with `value`
    /// exactly as their keys compare with the converted key; nil otherwise (the term is then
    /// scanned).
    ///
    /// Predicates compare an integer with a double as doubles, so a double constant stands for
    /// an integer key only below 2⁵³ in magnitude, where every integer is a distinct double; a
    /// decimal constant becomes an integer key only when it is a whole number in range, and an
    /// integer a double or decimal key always. Doubles never become decimal keys, nor decimals
    /// double keys. Other kinds must match the attribute's.
    static func indexConstant(_ value: StoredValue, for type: AttributeType) -> StoredValue? {
        switch (type, value) {
        case (.bool, .bool), (.string, .string), (.date, .date), (.uuid, .uuid), (.binary, .binary),
             (.double, .double), (.decimal, .decimal):
            return value
        case (.double, .int(let integer)):
            return .double(Double(integer))
        case (.decimal, .int(let integer)):
            return .decimal(Decimal(integer))
        case (.int16, _), (.int32, _), (.int64, _):
            guard let range = type.integerRange else { return nil }
            let integer: Int64?
            switch value {
            case .int(let exact):
                integer = exact
            case .double(let double):
                integer = double.rounded() == double && abs(double) < 9_007_199_254_740_992 ? Int64(double) : nil
            case .decimal(let decimal):
                let truncated = NSDecimalNumber(decimal: decimal).int64Value
                integer = Decimal(truncated) == decimal ? truncated : nil
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

/// The first attribute of an index, as the fetch planner sees it.
struct IndexLead: Sendable {
    let field: Int
    let name: String
    let type: AttributeType
    /// For an index on `canonical:(x)`: `x`, whose `[cd]` comparisons the index answers too.
    let canonicalOf: String?
    /// The index has no further columns, so its ranges can decide a term on their own.
    let isSingleAttribute: Bool
}

/// Keys of an index tree from `lower` to `upper` by memcmp, `upper` inclusive as a prefix
/// (every key starting with it is in range; nil: to the end). A struct, not a tuple: arrays of
/// tuples are destroyed through the runtime's generic tuple code.
struct KeyRange: Sendable {
    var lower: [UInt8]
    var upper: [UInt8]?

    init(_ lower: [UInt8], _ upper: [UInt8]?) {
        self.lower = lower
        self.upper = upper
    }

    /// Whether `key`, reached by walking up from ``lower``, lies past the range: above
    /// ``upper`` and not starting with it (``upper`` is inclusive as a prefix).
    ///
    /// That is: the key's first bytes, as many as both have, order after ``upper``'s (a key
    /// equal to them either starts with ``upper`` or is shorter and precedes it). One `memcmp`
    /// per entry, where the sequence algorithms compared byte by byte.
    @inline(__always)
    func isPast(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let upper else { return false }
        return upper.withUnsafeBytes { bound in
            let shared = Swift.min(key.count, bound.count)
            guard shared > 0, let keyStart = key.baseAddress, let boundStart = bound.baseAddress else { return false }
            return memcmp(keyStart, boundStart, shared) > 0
        }
    }
}
