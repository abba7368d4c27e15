/// `ANY`/`SOME`, `ALL`, `NONE` before a key path through a to-many relationship.
public enum Quantifier: String, Hashable, Sendable {
    /// `direct`: no quantifier; `any`: some value passes; `all`: every value passes; `none`: no value
    /// passes.
    case direct, any, all, none
}
