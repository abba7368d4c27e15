/// What entered and left one parent's relationship in this transaction.
struct AggregateDelta {
    var count: Int64 = 0
    /// Values that entered (+) and left (−), non-nil ones only.
    var added: [StoredValue] = []
    var removed: [StoredValue] = []
}

extension AggregateDelta {
    mutating func enter(_ v: StoredValue) {
        count += 1
        if !v.isNull { added.append(v) }
    }

    mutating func leave(_ v: StoredValue) {
        count -= 1
        if !v.isNull { removed.append(v) }
    }
}
