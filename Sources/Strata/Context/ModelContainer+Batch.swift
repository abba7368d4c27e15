import StrataRecords
import StrataStorage

/// Changes by predicate: the objects a fetch descriptor selects are updated or deleted in one store
/// transaction, without making an object of any of them — derived values moved at commit, delete
/// rules applied, uniqueness checked, the history recorded — and every context and observer of the
/// container is told as of a save (contexts that merge automatically refresh the objects they hold;
/// deleted ones turn into faults).
extension ModelContainer {
    /// Sets `values` (stored attributes and to-ones by name, as the record layer's
    /// `RecordTransaction.update` takes them: a to-one's value is the target's
    /// `ObjectID`, or `StoredValue.null`) on every object `descriptor` selects, and returns
    /// how many it changed.
    ///
    /// ```swift
    /// let overdue = FetchDescriptor<Item>(predicate: try FetchPredicate(format: "due < %@", Date()))
    /// try container.updateAll(overdue, set: ["done": true])
    /// ```
    ///
    /// - Throws: `StrataError`: `misuse` for a descriptor with an in-memory filter or sort
    ///   (it would need the objects), `invalidArgument` or `validation` for a name or value the
    ///   entity does not take (even when nothing matches), `conflict` when the values break a
    ///   uniqueness rule; nothing is changed then.
    @discardableResult
    public func updateAll<T: ManagedObject>(_ descriptor: FetchDescriptor<T>,
                                            set values: [String: any ValueConvertible]) throws -> Int {
        try changeAll(descriptor, "updateAll") { tx, request in try tx.updateAll(request, set: values) }
    }

    /// Deletes every object `descriptor` selects, with the model's delete rules, and returns
    /// how many it deleted (objects a rule then deleted are not counted). A `deny` rule that one
    /// of them breaks refuses the whole call: nothing is deleted.
    ///
    /// - Throws: `StrataError`: `misuse` for a descriptor with an in-memory filter or sort,
    ///   `validation` for a broken `deny` rule.
    @discardableResult
    public func deleteAll<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try changeAll(descriptor, "deleteAll") { tx, request in try tx.deleteAll(request) }
    }

    private func changeAll<T: ManagedObject>(_ descriptor: FetchDescriptor<T>, _ operation: String,
                                             _ change: (RecordTransaction, FetchRequest) throws -> Int) throws -> Int {
        try whileOpen(operation) {
            guard !descriptor.refinesInMemory else {
                throw StrataError.misuse("\(operation): an in-memory filter or sort needs the objects; "
                    + "fetch them and change each instead")
            }
            guard let binding = binding(of: EntitySchema.of(T.self)) else {
                throw StrataError.misuse("\(operation): \(T.self) is not one of the container's model classes")
            }
            // As a fetch: a computed or transient property named is refused in the same words.
            let fetch = StoreFetch(descriptor)
            try fetch.checkStoreKeys(binding, in: self)
            let request = fetch.request(binding.name)
            // This process's commits reach its contexts as saves: other processes' first, in order.
            deliverOtherProcessCommits()
            let (count, changes) = try store.writeReportingChanges { tx in try change(tx, request) }
            announce(SaveNotification(changes: changes, container: self), from: nil)
            return count
        }
    }
}
