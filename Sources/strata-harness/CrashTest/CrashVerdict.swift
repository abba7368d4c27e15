import StrataTesting

enum CrashVerdict {
    case ok(state: Int)
    case lost(String)
    case corrupt(String)
    case unrecoverable(String)

    /// An error met while recovering, reading or writing the recovered store.
    static func from(_ error: any Error, _ during: String) -> CrashVerdict {
        if isCorruptError(error) || error is HarnessFailure || error is CrashWorkloadFailure {
            return .corrupt("\(during): \(error)")
        }
        return .unrecoverable("\(during): \(error)")
    }
}
