/// How a save resolves optimistic-locking conflicts: objects it changed whose rows another
/// save changed since this context read them.
public enum MergePolicy: Sendable, Equatable {
    /// The save fails with `StrataError.mergeConflicts`, listing every conflict; nothing is
    /// written and the context keeps its changes.
    case error
    /// Per property: the store's value wins where the other save changed it; the object's
    /// changes win elsewhere.
    case mergeByPropertyStoreTrump
    /// Per property: the object's changes win; properties it did not change take the store's values.
    case mergeByPropertyObjectTrump
    /// The object's whole state is written over the store's.
    case overwrite
    /// The object's changes are dropped; it takes the store's values.
    case rollback
}
