/// One committed state of the store: what a snapshot pins. Immutable once published.
final class Version: @unchecked Sendable {
    struct Tree {
        let id: UInt32
        let name: String
        /// `nil` for an empty tree. Always in memory while the version lives.
        let root: Page?
        let count: UInt64
    }

    /// The last transaction this state includes.
    let txid: UInt64
    let trees: [String: Tree]
    let nextTreeID: UInt32
    let file: PageFile
    /// Garbage bytes in the file when this version was published (for `info`: what a pinned
    /// snapshot holds back).
    let deadBytesAtCommit: UInt64

    init(txid: UInt64, trees: [String: Tree], nextTreeID: UInt32, file: PageFile, deadBytesAtCommit: UInt64) {
        self.txid = txid
        self.trees = trees
        self.nextTreeID = nextTreeID
        self.file = file
        self.deadBytesAtCommit = deadBytesAtCommit
    }
}
