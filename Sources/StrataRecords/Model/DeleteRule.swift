/// What deleting an object does to the objects a relationship reaches.
public enum DeleteRule: String, Hashable, Sendable {
    /// Clear the inverse reference (remove the object from the inverse to-many).
    case nullify
    /// Delete the reached objects too (and their cascades, transitively).
    case cascade
    /// Refuse the delete while the relationship reaches any object (`StrataError.conflict`).
    case deny
}
