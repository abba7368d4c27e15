/// Evaluates one compiled predicate against objects, one at a time, with the semantics of
/// `NSPredicate` over Core Data objects:
///
/// - `key == nil` holds when the value is absent or a to-one on the way is nil.
/// - Values of different kinds are unequal and unordered (false, not an error: a subject
///   has no model; a fetch type-checks first and throws instead), except that int, double and
///   decimal compare by numeric value; `!=` is the negation of `==`; NaN equals nothing.
/// - Strings are equal when canonically equivalent (Swift's `==`) and order by the Unicode
///   scalars of their NFC forms, the order of index keys.
/// - A comparison without a quantifier on a path through a to-many relationship holds when
///   it holds for ANY of the values; `ALL` of no values holds; `NONE` is NOT ANY.
/// - `IN` tests membership in a list or to-many path (containment when the right side is a
///   string); `BETWEEN` includes both bounds.
/// - String operators on non-strings are false. Without options `BEGINSWITH`, `ENDSWITH` and
///   `CONTAINS` match whole characters; `[c]` and `[d]` fold both sides; `[n]` compares the
///   NFC forms' bytes and supersedes them. An empty string begins, ends and is contained in
///   every string.
///
/// An evaluator keeps a cache of regular expressions for `MATCHES` patterns read from the
/// objects, so it is not `Sendable`: make one per task from a shared ``CompiledPredicate``.
final class PredicateEvaluator {
    /// The compiled predicate this evaluates.
    let compiled: CompiledPredicate
    private var cache = RegexCache()

    /// An evaluator of an already compiled predicate (the cheap way to get one per task).
    init(_ compiled: CompiledPredicate) {
        self.compiled = compiled
    }

    /// Compiles `predicate` and makes an evaluator of it.
    ///
    /// - Throws: `StrataError.invalidFetch` as ``CompiledPredicate/init(_:)`` does.
    convenience init(_ predicate: FetchPredicate) throws {
        self.init(try CompiledPredicate(predicate))
    }

    /// Whether `subject` satisfies the predicate.
    ///
    /// - Throws: what `subject.values(at:)` throws, and `StrataError.invalidFetch` when a
    ///   `MATCHES` pattern read from the subject is not a valid regular expression.
    func evaluate(_ subject: some PredicateSubject) throws -> Bool {
        try compiled.evaluate(subject, cache: &cache)
    }
}

@available(*, unavailable, message: "an evaluator caches per use; share a CompiledPredicate instead")
extension PredicateEvaluator: Sendable {}

extension FetchPredicate {
    /// Whether `subject` satisfies this predicate, compiling it for this one call; to test
    /// many objects, compile once with ``PredicateEvaluator``.
    ///
    /// - Throws: `StrataError.invalidFetch` for a malformed predicate, and what the subject throws.
    func evaluate(_ subject: some PredicateSubject) throws -> Bool {
        try CompiledPredicate(self).evaluate(subject)
    }
}
