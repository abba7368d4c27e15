/// One step of a ``MigrationPlan``: from one version of the model to the next.
///
/// A lightweight stage carries rows over as ``MigrationPolicy/lightweight`` does. A custom
/// stage does the same for what can be carried (fields whose type or relationship target
/// changed, and entities the new model drops, are not) and then runs its code with the old
/// objects (``MigrationSnapshot``) and a transaction on the new model holding the carried rows:
/// set what could not be carried, insert objects of new entities, delete what should go. Derived
/// values, indexes and inverses are rebuilt once the code returns, and the new model's rules
/// (required values, validation, uniqueness, `deny`) are judged then.
public struct MigrationStage: Sendable {
    /// The model the stage starts from.
    public let source: Model
    /// The model it ends at.
    public let destination: Model
    /// The custom stage's code (nil: lightweight).
    let migrate: (@Sendable (MigrationSnapshot, RecordTransaction) throws -> Void)?

    /// A stage that carries rows over from `source` to `destination` as a lightweight migration
    /// does: added, removed and renamed properties and entities, widened integers, new derived
    /// attributes and indexes backfilled. A changed type fails the open with `modelMismatch`
    /// naming the property: that needs a custom stage.
    public static func lightweight(from source: Model, to destination: Model) -> MigrationStage {
        MigrationStage(source: source, destination: destination, migrate: nil)
    }

    /// A stage whose code finishes the move from `source` to `destination`: `migrate` reads the
    /// objects as they were (`old`) and writes through `new`, the transaction on the new model,
    /// in which every object that could be carried over already is (with its primary key). An
    /// error it throws ends the migration: nothing is changed, and the open throws that error.
    public static func custom(
        from source: Model, to destination: Model,
        migrate: @escaping @Sendable (_ old: MigrationSnapshot, _ new: RecordTransaction) throws -> Void
    ) -> MigrationStage {
        MigrationStage(source: source, destination: destination, migrate: migrate)
    }
}
