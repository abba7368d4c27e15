/// Collects a model's entities.
@resultBuilder
public enum ModelBuilder {
    /// Adds an entity to the model.
    public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
    /// The entities of a block, in order.
    public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
    /// The entities of an `if` without `else`: none when the condition is false.
    public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
    /// The entities of the first branch of an `if`/`else` or `switch`, when it is taken.
    public static func buildEither(first: [Entity]) -> [Entity] { first }
    /// The entities of the second branch of an `if`/`else` or `switch`, when it is taken.
    public static func buildEither(second: [Entity]) -> [Entity] { second }
    /// The entities of a `for` loop, every iteration's in order.
    public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
}
