/// The tally of a crash test.
struct CrashCounts {
    var rounds = 0
    var lost = 0
    var corrupt = 0
    var unrecoverable = 0
    var reported = 0

    /// Records one round's verdict; prints the first few failures on stderr.
    mutating func record(_ verdict: CrashVerdict, _ label: @autoclosure () -> String) {
        rounds += 1
        let kind: String
        switch verdict {
        case .ok: return
        case .lost(let why): lost += 1; kind = "LOST: \(why)"
        case .corrupt(let why): corrupt += 1; kind = "CORRUPT: \(why)"
        case .unrecoverable(let why): unrecoverable += 1; kind = "UNRECOVERABLE: \(why)"
        }
        reported += 1
        if reported <= 25 { printError("crash-test: \(label()): \(kind)") }
        if reported == 25 { printError("crash-test: (further failures not shown)") }
    }
}
