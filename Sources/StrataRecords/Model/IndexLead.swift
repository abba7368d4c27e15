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
