/// A condition on the objects of one entity, as a tree: what a format string such as
/// `"itemCount > %@ AND searchName BEGINSWITH[cd] %@"` parses into, or what the typed
/// builder makes. Evaluated against rows (`PredicateEvaluator`) and planned onto indexes.
public indirect enum FetchPredicate: Hashable, Sendable {
    /// Always true or always false (`TRUEPREDICATE`, `FALSEPREDICATE`).
    case constant(Bool)
    /// `lhs op rhs`, with a quantifier when `lhs` runs through a to-many relationship.
    case comparison(Comparison)
    /// True when every subpredicate is (an empty list is true).
    case and([FetchPredicate])
    /// True when any subpredicate is (an empty list is false).
    case or([FetchPredicate])
    /// True when the subpredicate is false.
    case not(FetchPredicate)
}
