/// Whether a record store writes persistent history (FORMAT.md §12, "History"). The choice
/// is stored in the file, so every writer of the store, in any process, records alike.
public enum HistoryRecording: Sendable, Equatable {
    /// Keep what the store says (a new store records no history).
    case asStored
    /// Record every commit from now on. Turning it on for a store that did not record marks
    /// the tokens before as purged: a consumer holding one learns it missed changes.
    case on
    /// Stop recording and delete the history the store holds.
    case off
}
