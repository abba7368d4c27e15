/// Faults that load together: the primary keys of one `fetchBatchSize` slice of a fetch.
final class FaultBatch {
    let raws: [Int64]
    init(raws: [Int64]) { self.raws = raws }
}
