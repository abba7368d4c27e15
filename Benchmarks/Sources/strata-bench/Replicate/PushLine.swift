import Foundation

/// One push as `strata replicate --json` prints it (a line each, flushed as the push ends).
struct PushLine: Codable, Equatable {
    /// Whether the push filled the tables afresh from a snapshot (the first push).
    var copiedAll: Bool
    /// Strata transactions applied, the history changes they held, the rows PostgreSQL wrote
    /// for them (and for the copy), in how many PostgreSQL transactions (the copy not counted).
    var transactions: Int
    var changes: Int
    var rows: Int
    var batches: Int
    /// The push's time in the tool (from its first query to its last; the process's start,
    /// opening the store and connecting are not in it).
    var seconds: Double
    /// The token of the last transaction PostgreSQL holds now.
    var token: UInt64
    /// How long before the push's end the last transaction it applied was committed.
    var lagSeconds: Double?
}

extension PushLine {
    /// The line `text` decodes to, or nil when it is not a push's line.
    init?(_ text: String) {
        guard let line = try? JSONDecoder().decode(PushLine.self, from: Data(text.utf8)) else { return nil }
        self = line
    }
}
