/// One entry of a join tree: this row's key, the other row's key (the tree's key order).
struct JoinPair: Comparable {
    var a: UInt64
    var b: UInt64

    init(_ a: UInt64, _ b: UInt64) {
        self.a = a
        self.b = b
    }

    static func < (x: JoinPair, y: JoinPair) -> Bool { x.a != y.a ? x.a < y.a : x.b < y.b }

    /// How many pairs of each sorted, duplicate-free list the other lacks (one merge).
    static func difference(_ x: [JoinPair], _ y: [JoinPair]) -> (onlyX: Int, onlyY: Int) {
        var i = 0, j = 0, onlyX = 0, onlyY = 0
        while i < x.count || j < y.count {
            if j == y.count || (i < x.count && x[i] < y[j]) {
                onlyX += 1
                i += 1
            } else if i == x.count || y[j] < x[i] {
                onlyY += 1
                j += 1
            } else {
                i += 1
                j += 1
            }
        }
        return (onlyX, onlyY)
    }
}
