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

        init(_ predicate: FetchPredicate) throws {
            switch predicate {
            case .constant(let value): self = .constant(value)
            case .comparison(let comparison): self = .comparison(try CompiledComparison(comparison))
            case .and(let terms): self = .and(try terms.map(Node.init))
            case .or(let terms): self = .or(try terms.map(Node.init))
            case .not(let operand): self = .not(try Node(operand))
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

    /// Compiles `predicate`.
    ///
    /// - Throws: `StrataError.invalidFetch` for a `MATCHES` constant that is not a valid
    ///   regular expression, or a `BETWEEN` whose right side is not a list of two bounds.
    init(_ predicate: FetchPredicate) throws {
        self.predicate = predicate
        root = try Node(predicate)
    }

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
