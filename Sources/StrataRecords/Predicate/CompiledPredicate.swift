/// A predicate prepared for evaluating many objects: constant strings folded, `LIKE` and
/// `MATCHES` patterns compiled, `IN` lists hashed, all once.
///
/// It is immutable and `Sendable`: compile once per fetch and share it between tasks, each
/// evaluating through its own ``PredicateEvaluator``.
struct CompiledPredicate: Sendable {
    /// The predicate this was compiled from.
    let predicate: FetchPredicate
    private let root: Node

    private indirect enum Node: Sendable {
        case constant(Bool)
        case comparison(CompiledComparison)
        case and([Node])
        case or([Node])
        case not(Node)

        init(_ predicate: FetchPredicate, in entity: EntityDescription?) throws {
            switch predicate {
            case .constant(let value): self = .constant(value)
            case .comparison(let comparison): self = .comparison(try CompiledComparison(comparison, in: entity))
            case .and(let terms): self = .and(try terms.map { try Node($0, in: entity) })
            case .or(let terms): self = .or(try terms.map { try Node($0, in: entity) })
            case .not(let operand): self = .not(try Node(operand, in: entity))
            }
        }

        /// The comparisons decided on stored bytes this node is the AND of, or nil when it is
        /// anything else.
        var storedComparisons: [StoredComparison]? {
            switch self {
            case .comparison(let comparison): return comparison.stored.map { [$0] }
            case .and(let terms):
                var all: [StoredComparison] = []
                for term in terms {
                    guard let stored = term.storedComparisons else { return nil }
                    all += stored
                }
                return all
            default: return nil
            }
        }

        var readsOnlyFields: Bool {
            switch self {
            case .constant: return true
            case .comparison(let comparison): return comparison.readsOnlyFields
            case .and(let terms), .or(let terms): return terms.allSatisfy(\.readsOnlyFields)
            case .not(let operand): return operand.readsOnlyFields
            }
        }

        func evaluate<Subject: PredicateSubject>(_ subject: Subject, cache: inout RegexCache) throws -> Bool {
            switch self {
            case .constant(let value):
                return value
            case .comparison(let comparison):
                return try comparison.evaluate(subject, cache: &cache)
            case .and(let terms):
                for term in terms where !(try term.evaluate(subject, cache: &cache)) { return false }
                return true
            case .or(let terms):
                for term in terms where try term.evaluate(subject, cache: &cache) { return true }
                return false
            case .not(let operand):
                return !(try operand.evaluate(subject, cache: &cache))
            }
        }
    }

    /// Compiles `predicate`. With `entity` (a fetch's), key paths naming its stored fields are
    /// bound to their indexes: the predicate is then only for rows of that entity.
    ///
    /// - Throws: `StrataError.invalidFetch` for a `MATCHES` constant that is not a valid
    ///   regular expression, or a `BETWEEN` whose right side is not a list of two bounds.
    init(_ predicate: FetchPredicate, for entity: EntityDescription? = nil) throws {
        self.predicate = predicate
        root = try Node(predicate, in: entity)
        readsOnlyFields = root.readsOnlyFields
        if let entity, let comparisons = root.storedComparisons {
            rowFilter = StoredRowFilter(comparisons, types: entity.fieldTypes)
        } else {
            rowFilter = nil
        }
    }

    /// The predicate as one walk of a stored row, when it is a comparison of a field with a
    /// constant decided on stored bytes, or an AND of such (``StoredRowFilter``).
    let rowFilter: StoredRowFilter?

    /// Whether every comparison reads constants and the subject's own fields alone (bound to an
    /// entity's field indexes): a scan can then evaluate it on a row's stored bytes
    /// (``RowBytesSubject``) without building the row.
    let readsOnlyFields: Bool

    /// Whether `subject` satisfies the predicate. `MATCHES` patterns read from the subject
    /// are compiled afresh on each call; a ``PredicateEvaluator`` caches them.
    func evaluate(_ subject: some PredicateSubject) throws -> Bool {
        var cache = RegexCache()
        return try root.evaluate(subject, cache: &cache)
    }

    func evaluate<Subject: PredicateSubject>(_ subject: Subject, cache: inout RegexCache) throws -> Bool {
        try root.evaluate(subject, cache: &cache)
    }
}
