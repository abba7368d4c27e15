/// One aggregate derived attribute: what it computes, and over which child field.
struct AggregateMember {
    let derived: ResolvedDerivedAttribute
    let function: AggregateFunction
    /// The child's field (nil for `@count`).
    let source: Int?
}
