import StrataStorage

/// The versions a store's model went through and how to move a store from each to the next.
///
/// ```swift
/// let plan = try MigrationPlan(stages: [
///     .lightweight(from: v1, to: v2),
///     .custom(from: v2, to: v3) { old, new in
///         for id in try old.objects("Person") {  // age was a string, now an integer
///             guard case .string(let text) = try old.value("age", of: id) else { continue }
///             try new.update(id, ["age": Int64(text) ?? 0])
///         }
///     },
/// ])
/// let store = try RecordStore(path: path, model: v3, migration: .plan(plan))
/// ```
///
/// Opening a store with a plan finds the store's version (recorded in the store; for a store
/// written before versions, the plan's earliest version whose model it holds), runs every stage
/// from there to the model's version in one write transaction — all or nothing: a stage that
/// throws, or a crash, leaves the store as it was — and records the new version. Derived values
/// are rebuilt by each stage; a stage's code never maintains them.
public struct MigrationPlan: Sendable {
    /// The stages, in order: each starts at the version the one before it ends at.
    public let stages: [MigrationStage]
    /// Told where a migration stands as it runs (``MigrationProgress``), on the opening thread.
    public var progress: (@Sendable (MigrationProgress) -> Void)?

    /// A plan of `stages`. Throws `invalidArgument` when there are none, when a stage does not
    /// raise the version, or when one does not start at the version (and model) the one before
    /// it ends at.
    public init(stages: [MigrationStage], progress: (@Sendable (MigrationProgress) -> Void)? = nil) throws {
        guard !stages.isEmpty else { throw StrataError.invalidArgument("a migration plan needs a stage") }
        for (i, stage) in stages.enumerated() {
            guard stage.source.version < stage.destination.version else {
                throw StrataError.invalidArgument("migration stage \(i) goes from version \(stage.source.version) "
                                                  + "to \(stage.destination.version): a stage raises the version")
            }
            guard i > 0 else { continue }
            let before = stages[i - 1].destination
            guard stage.source.version == before.version, stage.source.schemaLines == before.schemaLines else {
                throw StrataError.invalidArgument("migration stage \(i) starts at version \(stage.source.version), "
                                                  + "not at the model stage \(i - 1) ends at (version \(before.version))")
            }
        }
        self.stages = stages
        self.progress = progress
    }

    /// The model the plan ends at: the one to open the store with.
    public var destination: Model { stages[stages.count - 1].destination }

    /// The stage starting at `version`, by position.
    func stageIndex(from version: Int) -> Int? { stages.firstIndex { $0.source.version == version } }

    /// The earliest version whose model has exactly `lines` (a store that recorded no version).
    func earliestVersion(holding lines: [String]) -> Int? {
        for stage in stages where stage.source.schemaLines == lines { return stage.source.version }
        return destination.schemaLines == lines ? destination.version : nil
    }
}
