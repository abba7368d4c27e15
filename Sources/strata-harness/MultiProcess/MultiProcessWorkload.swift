import StrataRecords
import StrataStorage
import StrataTesting

/// What the processes of `multi-process` share: the store's options and the deterministic
/// transaction each writer commits as its step `n`, so the parent can compute, from the
/// progress a writer recorded, exactly which items must exist.
///
/// Writer `w`'s step `n` inserts item `w<w>-<n>` into one of the lists and sets its progress tag
/// `w<w>` to `n`, in one transaction; every fifth step also moves item `n - 3` to another list,
/// and every tenth deletes item `n - 7` (moved and deleted steps never coincide: `n - 3` is 2 or
/// 7 modulo 10, `n - 7` is 3). Lists' `itemCount`, `total` and the other derived values follow.
enum MultiProcessWorkload {
    static let lists = 8

    static func options(lockTimeout: Duration = .seconds(30)) -> StoreOptions {
        var options = StoreOptions(durability: .full)
        options.sharing = .shared(lockTimeout: lockTimeout)
        // Small thresholds: checkpoints (spread over commits) happen often, so processes adopt
        // each other's.
        options.checkpointLogBytes = 64 << 10
        options.checkpointStepPages = 4
        options.cacheBytes = 16 << 20
        return options
    }

    static func title(writer: Int, step: Int) -> String { "w\(writer)-\(step)" }

    /// The steps of writer `writer` whose items exist once it has committed steps 1...`last`.
    static func expectedSteps(through last: Int) -> Set<Int> {
        var steps = Set(1..<(last + 1))
        for n in stride(from: 10, through: last, by: 10) { steps.remove(n - 7) }
        return steps
    }

    /// Creates the lists and one progress tag per writer.
    static func prepare(path: String, writers: Int) throws {
        let store = try RecordStore(path: path, model: try todoModel(), options: options())
        try store.write { tx in
            for list in 0..<lists { _ = try tx.insert("TodoList", ["name": "List \(list)"]) }
            for writer in 0..<writers { _ = try tx.insert("Tag", ["label": "w\(writer)", "score": 0]) }
        }
        try store.close()
    }

    /// The item titled `title`, if any.
    static func item(_ title: String, in reader: RecordReader) throws -> ObjectID? {
        try reader.fetch(FetchRequest("Item", predicate: PropertyPath("title") == title)).first
    }

    /// The progress tag of `writer` and the last step it recorded.
    static func progress(of writer: Int, in reader: RecordReader) throws -> (ObjectID, Int) {
        guard let tag = try reader.fetch(FetchRequest("Tag", predicate: PropertyPath("label") == "w\(writer)")).first
        else { throw ToolError("no progress tag for writer \(writer)") }
        guard case .int(let score) = try reader.value("score", of: tag) else {
            throw ToolError("progress tag of writer \(writer) holds no number")
        }
        return (tag, Int(score))
    }

    /// Commits step `step` of `writer`.
    static func commit(step: Int, writer: Int, lists: [ObjectID], tag: ObjectID, in tx: RecordTransaction) throws {
        let item = try tx.insert("Item", ["title": title(writer: writer, step: step), "amount": step % 97,
                                          "quantity": Int32(1 + step % 5)])
        try tx.set("list", of: item, to: lists[(step * 7 + writer) % lists.count])
        try tx.update(tag, ["score": Int64(step)])
        if step % 5 == 0, step > 3, let moved = try MultiProcessWorkload.item(title(writer: writer, step: step - 3), in: tx) {
            try tx.set("list", of: moved, to: lists[(step / 5 + writer) % lists.count])
        }
        if step % 10 == 0, step > 7, let doomed = try MultiProcessWorkload.item(title(writer: writer, step: step - 7), in: tx) {
            try tx.delete(doomed)
        }
    }
}
