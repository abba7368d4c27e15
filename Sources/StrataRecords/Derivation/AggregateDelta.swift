/// What entered and left one parent's relationship in this transaction.
struct AggregateDelta {
    var count: Int64 = 0
    /// Values that entered (+) and left (−), non-nil ones only.
    var added: [StoredValue] = []
    var removed: [StoredValue] = []
}

extension AggregateDelta {
    mutating func enter(_ value: StoredValue) {
        count += 1
        if !value.isNull { added.append(value) }
    }

    mutating func leave(_ value: StoredValue) {
        count -= 1
        if !value.isNull { removed.append(value) }
    }
}
