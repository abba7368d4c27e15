/// What opening a store whose model differs from the given one does.
public enum MigrationPolicy: Sendable {
    /// Fail with `StrataError.modelMismatch`, listing the differences.
    case none
    /// Migrate in one transaction: add or remove attributes, relationships, indexes,
    /// constraints, derived attributes and entities; rename them (``AttributeDescription/renamingIdentifier``
    /// and the other `renamedFrom:` arguments); change defaults; widen integers. New derived
    /// attributes and indexes are backfilled. Anything else (a changed type) is an error that
    /// names the property.
    case lightweight
    /// Migrate through the stages of `plan` from the store's version to the model's, in one
    /// transaction (``MigrationPlan``). The model opened must be the plan's last.
    case plan(MigrationPlan)
}
