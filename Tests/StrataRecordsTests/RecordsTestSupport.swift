import Foundation
import Testing
import StrataStorage
@testable import StrataRecords
// Re-exported to every file of this test target: the simulated file system, the seeded
// generator, `todoModel()` and `makeStore` live in the StrataTesting target, and the suites
// keep using them by name.
@_exported import StrataTesting

// `makeStore(_:fs:path:)` and `todoModel()` live in StrataTesting (shared with the tools).

extension RecordStore {
    /// One property of one object, read in its own snapshot.
    func value(_ property: String, of id: ObjectID) throws -> StoredValue {
        try read { try $0.value(property, of: id) }
    }
}

/// Records an issue for every problem `checkRecords()` finds (indexes, inverses, derived values).
func expectConsistent(_ store: RecordStore, _ label: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
    let problems = try store.read { try $0.checkRecords() }
    for p in problems { Issue.record("\(label) \(p)", sourceLocation: sourceLocation) }
}
