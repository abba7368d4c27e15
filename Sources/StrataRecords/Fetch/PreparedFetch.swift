import StrataStorage
import Synchronization

/// A fetch checked and planned once, run many times with values for its variables: SQLite's
/// prepared statement, Core Data's fetch-request template with `$variables`.
///
/// ```swift
/// let bySKU = try store.prepare(FetchRequest("Item", predicate: try FetchPredicate(format: "sku == $sku")))
/// try store.read { r in
///     for sku in skus { found += try r.fetch(bySKU, ["sku": .string(sku)]).count }
/// }
/// ```
///
/// Preparing checks the request against the model (every error a fetch of it could raise that
/// does not depend on the values) and picks the index; running it makes that index's key
/// ranges from the values and checks what the index did not decide. The results are those of
/// the same request with the values written in as constants, and so are the errors: the first
/// run with values of new kinds (a string where a number was given before) checks the request
/// with them. A variable stands for one value; a list is a list of variables
/// (`sku IN {$a, $b}`).
///
/// Immutable and `Sendable`: prepare once per store and share it between tasks. It runs only
/// on readers of the store it was prepared for.
public final class PreparedFetch: Sendable {
    /// The request, its variables unbound.
    public let request: FetchRequest
    /// The names of the request's variables, without `$`, in the order they first appear.
    public let variables: [String]
    let model: Model
    let entity: EntityDescription
    /// Made with `planning`: its index ranges are remade for each set of values.
    let plan: FetchPlan
    /// What is left to check on each candidate when the index decides its term, and when not.
    let residualIfDecided: Residual
    let residualIfNotDecided: Residual
    /// No sort and no offset: when one index range decides the predicate, the index's keys in
    /// that range, in index order, are the answer (``RecordReader/indexKeys(_:_:narrow:_:limit:)``).
    let answersFromOneRange: Bool
    /// Set when the request is one equality or prefix of an attribute with a variable that one
    /// index range decides alone (`sku == $sku`, `name BEGINSWITH[cd] $p` on an index of
    /// `canonical:(name)`; no sort, no offset): a run makes the range's key from the value and
    /// reads the index's keys, without making a plan.
    let lookup: IndexLookup?

    /// What a lookup needs per run: the index, the variable, the index's type, how the key is
    /// made from the value.
    struct IndexLookup: Sendable {
        enum Kind: Sendable {
            /// Entries equal to the value: compared as the index's keys compare (no `[cd]`).
            case equal
            /// Entries that start with the value, compared by bytes (`[n]`, or `[cd]` over an
            /// index of folded text): the comparison then means exactly what the keys hold.
            case prefix
        }
        let tree: String
        /// The variable's position in ``PreparedFetch/variables``.
        let variable: Int
        let type: AttributeType
        let kind: Kind
        /// The index holds `canonical:` folded text, and the value is folded the same way.
        let folding: Bool

        /// The most room a reader's key buffer keeps between runs: a whole key is at most
        /// `StoreLimits.maxKeyLength` bytes.
        static let keptKeyCapacity = 2 * StoreLimits.maxKeyLength

        /// The range of the index's entries the variable's value in `values` selects, its key
        /// made in `key` (cleared first; a buffer the reader keeps between runs, so a run
        /// allocates no key); nil when the general path must decide (a value the index cannot
        /// hold as it is, NaN, a prefix that is not a string, or a value cut to fit a key: then
        /// the index does not decide the term).
        func range(_ values: FetchBindings, key: inout [UInt8]) -> KeyRange? {
            let value = values.values[variable]
            if kind == .prefix {
                guard type == .string, case .string = value else { return nil }
            }
            // Kept for the next run only while it is key-sized: a probe longer than any key
            // (which the general path decides) leaves its room held until the next lookup at most.
            if key.capacity > Self.keptKeyCapacity { key = [] }
            // The usual probe, a plain string for a string index, is written over the last key.
            if type == .string, case .string(let string) = value,
               KeyEncoding.setPlainASCIIKey(folding ? TextFolding.canonical(string) : string,
                                            terminated: kind == .equal, in: &key) {
                return KeyRange(key, key)
            }
            key.removeAll(keepingCapacity: true)
            guard let whole = FetchPlan.appendIndexKey(value, for: type, folding: folding, to: &key), whole
            else { return nil }
            // A prefix is the string's key without its terminator, the upper bound as a prefix
            // (as ``FetchPlan/ranges(for:_:derivedAreCurrent:bindings:planning:)`` makes it).
            if kind == .prefix { key.removeLast(2) }
            return KeyRange(key, key)
        }
    }

    /// The kinds of values the request was checked with last, packed 4 bits per variable
    /// (``FetchBindings/packedKinds``; 0: none yet), and every combination checked.
    private let lastCheckedKinds = Atomic<UInt64>(0)
    private let checkedKinds = Mutex<Set<[UInt8]>>([])

    /// A predicate still to check on candidates.
    enum Residual: Sendable {
        case none
        /// Without variables: compiled once.
        case compiled(CompiledPredicate)
        /// With variables: compiled for each set of values, for the fetch's entity.
        case template(FetchPredicate, EntityDescription)

        init(_ predicate: FetchPredicate?, for entity: EntityDescription) throws {
            guard let predicate else { self = .none; return }
            if predicate.hasVariables {
                self = .template(predicate, entity)
            } else {
                self = .compiled(try CompiledPredicate(predicate, for: entity))
            }
        }

        var isNone: Bool {
            if case .none = self { return true }
            return false
        }

        func matcher(_ values: FetchBindings) throws -> CompiledPredicate? {
            switch self {
            case .none: return nil
            case .compiled(let compiled): return compiled
            case .template(let template, let entity): return try CompiledPredicate(try template.substituting(values), for: entity)
            }
        }
    }

    init(_ request: FetchRequest, model: Model) throws {
        guard let entity = model.entity(request.entity) else {
            throw StrataError.invalidArgument("no entity '\(request.entity)' in the model")
        }
        try FetchTypeChecker(model: model, entity: entity, allowsVariables: true).check(request)
        self.request = request
        self.model = model
        self.entity = entity
        var names: [String] = []
        request.predicate?.forEachVariable { if !names.contains($0) { names.append($0) } }
        self.variables = names
        let plan = FetchPlan.make(request, entity: entity, planning: true)
        self.plan = plan
        residualIfNotDecided = try Residual(request.predicate, for: entity)
        var decided = plan
        if decided.decided == nil { decided.decided = plan.term }
        residualIfDecided = try Residual(decided.residual(request.predicate), for: entity)
        answersFromOneRange = request.sortDescriptors.isEmpty && request.offset == 0
        lookup = Self.lookup(plan, names, answersFromOneRange: answersFromOneRange,
                             decidedLeavesNothing: residualIfDecided.isNone)
    }

    /// The lookup of a request whose whole predicate is `attribute == $variable` on the
    /// attribute's own index, compared as the index's keys compare (no `[cd]`), or
    /// `attribute BEGINSWITH $variable` compared by bytes over what the index holds (`[n]` on the
    /// attribute's index; `[cd]` on an index of `canonical:(attribute)` or of the attribute
    /// `canonical:` derives), which the index decides exactly; else nil.
    private static func lookup(_ plan: FetchPlan, _ variables: [String], answersFromOneRange: Bool,
                               decidedLeavesNothing: Bool) -> IndexLookup? {
        guard answersFromOneRange, decidedLeavesNothing, let term = plan.term, let lead = plan.lead,
              lead.isSingleAttribute, case .index(let tree, _, _) = plan.access,
              term.quantifier == .direct, case .keyPath(let path) = term.lhs, path.count == 1,
              case .variable(let name) = term.rhs, let position = variables.firstIndex(of: name)
        else { return nil }
        let viaCanonical = lead.canonicalOf != nil && path[0] == lead.canonicalOf!
        guard path[0] == lead.name || viaCanonical else { return nil }
        switch (term.op, TextMode(term.options)) {
        case (.equal, .standard), (.equal, .exact):
            guard !viaCanonical else { return nil }
            return IndexLookup(tree: tree, variable: position, type: lead.type, kind: .equal, folding: false)
        case (.beginsWith, .exact):
            guard !viaCanonical, lead.type == .string else { return nil }
            return IndexLookup(tree: tree, variable: position, type: lead.type, kind: .prefix, folding: false)
        case (.beginsWith, .folded(let caseInsensitive, let diacriticInsensitive)):
            guard lead.canonicalOf != nil, caseInsensitive && diacriticInsensitive, lead.type == .string else { return nil }
            return IndexLookup(tree: tree, variable: position, type: lead.type, kind: .prefix, folding: true)
        default:
            return nil
        }
    }

    /// The plan for these values: the index ranges made from them; nil when the values cannot
    /// use the index (such as a fraction against an index of integers): the request then runs
    /// with the values as constants, planned afresh. Only what running needs is set.
    func plan(for values: FetchBindings, derivedAreCurrent: Bool) -> FetchPlan? {
        if case .words = plan.access, let term = plan.term {
            guard let words = FetchPlan.words(for: term, entity: entity, bindings: values),
                  words.query != nil else { return nil }
            var bound = FetchPlan(access: .words(tree: words.tree, query: words.query, searched: words.searched),
                                  ordered: false)
            bound.decides = true
            return bound
        }
        guard let term = plan.term, let lead = plan.lead,
              case .index(let tree, _, let field) = plan.access else { return plan }
        guard let (_, ranges, exact) = FetchPlan.ranges(for: term, lead, derivedAreCurrent: derivedAreCurrent,
                                                        bindings: values)
        else { return nil }
        var bound = FetchPlan(access: .index(tree: tree, ranges: ranges, field: field),
                              ordered: plan.sortsHere && ranges.count == 1)
        bound.decides = exact && lead.isSingleAttribute
        return bound
    }

    /// The values by name, checked to be exactly the request's variables.
    func bindings(_ values: [String: StoredValue]) throws -> FetchBindings {
        var ordered: [StoredValue] = []
        ordered.reserveCapacity(variables.count)
        for name in variables {
            guard let value = values[name] else {
                throw StrataError.invalidFetch(
                    "no value for $\(name) (the prepared fetch's variables: \(variableList))")
            }
            ordered.append(value)
        }
        if values.count != variables.count {
            let extra = values.keys.filter { !variables.contains($0) }.sorted()
            let names = extra.map { "$" + $0 }.joined(separator: ", ")
            throw StrataError.invalidFetch(
                "no variable \(names) in the prepared fetch (its variables: \(variableList))")
        }
        return FetchBindings(names: variables, values: ordered)
    }

    /// Values in the order of ``variables``, checked to be as many.
    func bindings(_ values: [StoredValue]) throws -> FetchBindings {
        guard values.count == variables.count else {
            let valueCount = "\(values.count) value\(values.count == 1 ? "" : "s")"
            let variableCount = "\(variables.count) variable\(variables.count == 1 ? "" : "s")"
            throw StrataError.invalidFetch("\(valueCount) for the prepared fetch's \(variableCount) (\(variableList))")
        }
        return FetchBindings(names: variables, values: values)
    }

    private var variableList: String {
        variables.isEmpty ? "none" : variables.map { "$" + $0 }.joined(separator: ", ")
    }

    /// Throws unless the request accepts values of these kinds (checked once per combination).
    func check(_ values: FetchBindings) throws {
        let packed = values.packedKinds
        if packed != 0 && lastCheckedKinds.load(ordering: .relaxed) == packed { return }
        let kinds = values.values.map(\.kindTag)
        if !checkedKinds.withLock({ $0.contains(kinds) }) {
            var bound = request
            bound.predicate = try request.predicate?.substituting(values)
            try FetchTypeChecker(model: model, entity: entity).check(bound)
            checkedKinds.withLock { _ = $0.insert(kinds) }
        }
        if packed != 0 { lastCheckedKinds.store(packed, ordering: .relaxed) }
    }

    static func unboundMessage(_ name: String) -> String {
        "$\(name) has no value: give the variables values (FetchPredicate.substituting, FetchDescriptor.substituting) "
            + "or run the request prepared (RecordStore.prepare)"
    }
}

extension RecordStore {
    /// Checks and plans `request` once, to run many times with values for its `$variables`
    /// (see ``PreparedFetch``).
    ///
    /// - Throws: `StrataError.invalidFetch` for what a fetch of the request would throw
    ///   whatever the values; `invalidArgument` for an unknown entity.
    public func prepare(_ request: FetchRequest) throws -> PreparedFetch {
        try PreparedFetch(request, model: model)
    }
}

extension RecordReader {
    /// The identifiers of the objects that match `fetch` with `values` for its variables, in
    /// its order, one page of them.
    ///
    /// - Throws: what fetching the request with the values written in as constants throws;
    ///   `invalidFetch` when `values` misses one of its variables or names another;
    ///   `invalidArgument` when `fetch` was prepared for another store's model.
    public func fetch(_ fetch: PreparedFetch, _ values: [String: StoredValue] = [:]) throws -> [ObjectID] {
        try fetchIDs(fetch, try fetch.bindings(values))
    }

    /// ``fetch(_:_:)`` with the values in the order of the fetch's ``PreparedFetch/variables``
    /// (the form for hot loops: no dictionary per run).
    public func fetch(_ fetch: PreparedFetch, values: [StoredValue]) throws -> [ObjectID] {
        try fetchIDs(fetch, try fetch.bindings(values))
    }

    /// How many objects match `fetch` with `values` (its limit and offset apply).
    ///
    /// - Throws: what ``fetch(_:_:)`` throws.
    public func fetchCount(_ fetch: PreparedFetch, _ values: [String: StoredValue] = [:]) throws -> Int {
        try fetchKeys(fetch, try fetch.bindings(values)).count
    }

    /// ``fetchCount(_:_:)`` with the values in the order of the fetch's variables.
    public func fetchCount(_ fetch: PreparedFetch, values: [StoredValue]) throws -> Int {
        try fetchKeys(fetch, try fetch.bindings(values)).count
    }

    /// The objects' identifiers, made as the index's keys are read when a lookup answers (no
    /// array of row keys in between); otherwise ``fetchKeys(_:_:checked:keeping:)``'s.
    private func fetchIDs(_ fetch: PreparedFetch, _ values: FetchBindings) throws -> [ObjectID] {
        try checkRun(fetch, values)
        let name = fetch.entity.name
        if let (tree, range, narrow) = lookupRange(fetch, values) {
            var ids: [ObjectID] = []
            try readIndexRange(tree, range, narrow: narrow, limit: fetch.request.limit, into: &ids) {
                ObjectID(entity: name, primaryKey: $0)
            }
            return ids
        }
        return try plannedKeys(fetch, values, keeping: nil).map { ObjectID(entity: name, primaryKey: $0.pk) }
    }

    /// The index and range a lookup of `fetch` reads for `values` (its key made in
    /// ``lookupKey``), and whether the range is one value's keys (an equality's); nil when the
    /// fetch has no lookup or these values need the plan.
    private func lookupRange(_ fetch: PreparedFetch, _ values: FetchBindings)
        -> (tree: String, range: KeyRange, narrow: Bool)? {
        guard let lookup = fetch.lookup, derivedAreCurrent,
              let range = lookup.range(values, key: &lookupKey) else { return nil }
        return (lookup.tree, range, lookup.kind == .equal)
    }

    /// Throws unless `fetch` can run on this reader with `values` (`checked`: the values were
    /// checked against it already).
    private func checkRun(_ fetch: PreparedFetch, _ values: FetchBindings, checked: Bool = false) throws {
        try checkOpen()
        guard fetch.model === model else {
            throw StrataError.invalidArgument(
                "the prepared fetch of \(fetch.entity.name) was prepared for another store's model")
        }
        if !checked { try fetch.check(values) }
    }

    /// `checked`: the values were checked against the fetch already (by the plan cache).
    func fetchKeys(_ fetch: PreparedFetch, _ values: FetchBindings, checked: Bool = false,
                   keeping kept: FetchedRows? = nil) throws -> [RowKey] {
        try checkRun(fetch, values, checked: checked)
        if let (tree, range, narrow) = lookupRange(fetch, values) {
            return try indexKeys(tree, range, narrow: narrow, fetch.entity, limit: fetch.request.limit)
        }
        return try plannedKeys(fetch, values, keeping: kept)
    }

    /// The keys of `fetch` with `values` (checked, and not answered by a lookup) through its
    /// plan for them, or the request with the values written in when they cannot use it.
    private func plannedKeys(_ fetch: PreparedFetch, _ values: FetchBindings,
                             keeping kept: FetchedRows?) throws -> [RowKey] {
        guard let plan = fetch.plan(for: values, derivedAreCurrent: derivedAreCurrent) else {
            var bound = fetch.request
            bound.predicate = try fetch.request.predicate?.substituting(values)
            return try plannedFetchKeys(bound, fetch.entity, keeping: kept)
        }
        let residual = plan.decides ? fetch.residualIfDecided : fetch.residualIfNotDecided
        if plan.decides, case .none = residual, fetch.answersFromOneRange,
           case .index(let tree, let ranges, _) = plan.access,
           ranges.count == 1 {
            return try indexKeys(tree, ranges[0], narrow: false, fetch.entity, limit: fetch.request.limit)
        }
        return try run(plan, matching: try residual.matcher(values), fetch.request, fetch.entity, keeping: kept)
    }

    /// The primary keys in one range of an index, in index order, at most `limit`: the whole
    /// answer of a fetch whose index decides its predicate, with no order or offset asked for
    /// (a prepared lookup by equality or prefix). ``run(_:matching:_:_:)`` gives the same keys
    /// for such a plan; this is its loop without what such a plan never needs (rows, sorting,
    /// cut-value runs, duplicate ranges), which otherwise made up much of a lookup's work.
    func indexKeys(_ tree: String, _ range: KeyRange, narrow: Bool, _ entity: EntityDescription,
                   limit: Int?) throws -> [RowKey] {
        var keys: [RowKey] = []
        let index = entity.index
        try readIndexRange(tree, range, narrow: narrow, limit: limit, into: &keys) {
            RowKey(entity: index, pk: $0)
        }
        return keys
    }

    /// Appends `make(primary key)` for each entry of `range` in the index `tree`, in index
    /// order, at most `limit`; `narrow`: the range holds one value's keys. Inlined into each
    /// caller, so `make` is code in its loop, not a call per key.
    @inline(__always)
    private func readIndexRange<Output>(_ tree: String, _ range: KeyRange, narrow: Bool, limit: Int?,
                                        into out: inout [Output], _ make: (UInt64) -> Output) throws {
        try willScanRows()
        if limit == 0 { return }
        // One allocation for the usual handful of entries (a range grown from empty was
        // reallocated at 1, 2, 4, 8 and 16 entries).
        out.reserveCapacity(Swift.min(limit ?? Self.firstKeysCapacity, Self.firstKeysCapacity))
        guard let cursor = try borrowCursor(tree) else { return }
        defer { giveBack(cursor, tree: tree) }
        // A leaf at a time; the entry that ends the range is mostly the one after the last
        // taken, in the same leaf, and is read there without moving the cursor. A narrow range
        // (one value's keys) mostly ends in the leaf it starts in: that leaf is read by a
        // descent without a path (decision 99); if the range goes on, the cursor seeks the first
        // key after the last one taken (that key followed by a 00 byte), or the range's start
        // when the leaf held none of it. Wider ranges seek with the path from the start.
        var leaf: LeafEntries
        var walking = !narrow
        if narrow {
            leaf = try range.lower.withUnsafeBytes { try cursor.leafEntries(from: $0) }
        } else {
            guard try cursor.seek(range.lower) else { return }
            leaf = try cursor.restOfLeaf()
        }
        while true {
            var last = -1
            for i in leaf.indices {
                let key = leaf.key(i)
                if range.isPast(key) { return }
                out.append(make(try KeyReader.trailingPrimaryKey(key, tree: tree)))
                if let limit, out.count == limit { return }
                last = i
            }
            let ok: Bool
            if walking {
                ok = try cursor.next()
            } else {
                walking = true
                if last >= 0 {
                    var after = Array(leaf.key(last))
                    after.append(0)
                    ok = try cursor.seek(after)
                } else {
                    ok = try cursor.seek(range.lower)
                }
            }
            guard ok else { return }
            leaf = try cursor.restOfLeaf()
        }
    }
}

extension StoredValue {
    /// One byte per kind of value: what a prepared fetch's type check depends on.
    var kindTag: UInt8 {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int: return 2
        case .double: return 3
        case .decimal: return 4
        case .string: return 5
        case .date: return 6
        case .uuid: return 7
        case .binary: return 8
        }
    }
}
