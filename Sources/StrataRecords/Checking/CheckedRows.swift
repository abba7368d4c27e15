/// One entity's rows as the checker read them.
struct CheckedRows {
    /// Primary keys, ascending (the rows tree's order).
    var keys: [UInt64] = []
    var rows: [[StoredValue]] = []
    var position: [UInt64: Int] = [:]

    mutating func append(_ pk: UInt64, _ row: [StoredValue]) {
        position[pk] = rows.count
        keys.append(pk)
        rows.append(row)
    }

    func row(_ pk: UInt64) -> [StoredValue]? { position[pk].map { rows[$0] } }
}
