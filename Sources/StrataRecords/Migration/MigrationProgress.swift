/// Where a migration stands, told to ``MigrationPlan/progress`` as it goes: at each phase of
/// each stage, and every few thousand rows while rows are read and written.
public struct MigrationProgress: Sendable, Equatable {
    /// What a stage is doing.
    public enum Phase: Sendable, Equatable {
        /// Reading the old rows into memory.
        case reading
        /// Writing them again in the new layout.
        case writing
        /// Running the stage's custom code.
        case migrating
        /// Rebuilding derived values, indexes and inverses, and checking the constraints.
        case deriving
        /// The stage is done (the store commits when the last stage is).
        case finished
    }

    /// The stage, counting from 0, among ``stageCount`` stages this open runs.
    public var stage: Int
    /// How many stages this open runs (those from the store's version to the model's).
    public var stageCount: Int
    /// The version the stage migrates from.
    public var fromVersion: Int
    /// The version it migrates to.
    public var toVersion: Int
    /// What it is doing.
    public var phase: Phase
    /// Rows read or written so far in this phase (0 in the phases that do not count rows).
    public var completedRows: Int
    /// Rows the stage moves.
    public var totalRows: Int
}

/// Tells a plan's observer of a stage's progress (nothing for a migration without one).
struct MigrationProgressReporter {
    var observer: (@Sendable (MigrationProgress) -> Void)?
    var stage = 0
    var stageCount = 1
    var fromVersion = 1
    var toVersion = 1

    static let silent = MigrationProgressReporter(observer: nil)

    /// Rows between two reports while rows move.
    static let interval = 4096

    func tell(_ phase: MigrationProgress.Phase, done: Int, of total: Int) {
        observer?(MigrationProgress(stage: stage, stageCount: stageCount, fromVersion: fromVersion,
                                    toVersion: toVersion, phase: phase, completedRows: done, totalRows: total))
    }

    func tellEvery(_ phase: MigrationProgress.Phase, done: Int, of total: Int) {
        if observer != nil && done % Self.interval == 0 { tell(phase, done: done, of: total) }
    }
}
