import Foundation
@testable import Strata
import StrataTesting
import Synchronization
import Testing

/// Decision 74: a save walks its updated and deleted objects in key order (entity, then
/// primary key), whatever order the program changed them in: hooks run, rows are written and
/// the change list is reported in that order, so other contexts merge it walking forward.
@Suite struct SaveOrderTests {
    final class Ordered: ManagedObject {
        @Attribute(default: 0) var value: Int64
        /// The keys `willSave` saw, by context (the seeds run in parallel).
        static let willSaveOrder = Mutex<[ObjectIdentifier: [UInt64]]>([:])
        override func willSave() {
            guard let context else { return }
            let key = objectID.primaryKey ?? 0
            Self.willSaveOrder.withLock { $0[ObjectIdentifier(context), default: []].append(key) }
        }
    }

    @Test(arguments: [UInt64(1), 7, 42])
    func updatesAndDeletesAreSavedInKeyOrder(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        try withContainer(for: [Ordered.self]) { container in
            let context = ModelContext(container)
            let objects = (0..<300).map { _ in Ordered() }
            for object in objects { context.insert(object) }
            try context.save()
            let shuffled = objects.shuffled(using: &random)
            for (i, object) in shuffled.prefix(200).enumerated() { object.value = Int64(i + 1) }
            for object in shuffled.suffix(50) { try context.delete(object) }
            Ordered.willSaveOrder.withLock { $0[ObjectIdentifier(context)] = [] }
            let notification = try #require(try context.save(), "seed \(seed)")
            let updated = notification.updatedIDs.compactMap(\.primaryKey)
            let deleted = notification.deletedIDs.compactMap(\.primaryKey)
            #expect(updated.count == 200 && deleted.count == 50, "seed \(seed)")
            #expect(updated == updated.sorted(), "seed \(seed)")
            #expect(deleted == deleted.sorted(), "seed \(seed)")
            // Hooks: the updated objects in key order, then the deleted ones.
            let hooks = Ordered.willSaveOrder.withLock { $0.removeValue(forKey: ObjectIdentifier(context)) ?? [] }
            #expect(hooks == updated.sorted() + deleted.sorted(), "seed \(seed)")
            let fresh = ModelContext(container)
            for (i, object) in shuffled.prefix(200).enumerated() {
                let again = try fresh.existingObject(with: object.objectID, as: Ordered.self)
                #expect(again.value == Int64(i + 1), "seed \(seed)")
            }
        }
    }
}
