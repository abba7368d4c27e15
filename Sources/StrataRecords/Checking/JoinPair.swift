/// One entry of a join tree: this row's key, the other row's key (the tree's key order).
struct JoinPair: Comparable {
    var row: UInt64
    var other: UInt64

    init(_ row: UInt64, _ other: UInt64) {
        self.row = row
        self.other = other
    }

    static func < (lhs: JoinPair, rhs: JoinPair) -> Bool {
        lhs.row != rhs.row ? lhs.row < rhs.row : lhs.other < rhs.other
    }

    /// How many pairs of each sorted, duplicate-free list the other lacks (one merge).
    static func difference(_ left: [JoinPair], _ right: [JoinPair]) -> (onlyLeft: Int, onlyRight: Int) {
        var i = 0, j = 0, onlyLeft = 0, onlyRight = 0
        while i < left.count || j < right.count {
            if j == right.count || (i < left.count && left[i] < right[j]) {
                onlyLeft += 1
                i += 1
            } else if i == left.count || right[j] < left[i] {
                onlyRight += 1
                j += 1
            } else {
                i += 1
                j += 1
            }
        }
        return (onlyLeft, onlyRight)
    }
}
