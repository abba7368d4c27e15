import Foundation
import Strata
import Testing

/// Lifecycle paths (decision 43): every way a loaded object leaves the loaded state (or its
/// context), with the hooks it runs, whether it is a fault, deleted or still registered after,
/// and what objects-did-change tells. Each row is what the docs of ``ManagedObject``'s hooks
/// and of the context's methods say for that path.
@Suite struct LifecyclePathTests {
    enum Path: String, CaseIterable, Sendable {
        case refreshDroppingChanges, refreshDroppingChangesOfAChangedObject
        case refreshKeepingChangesOfAnUnchangedObject, refreshKeepingChangesOfAChangedObject
        case refreshOfAnObjectAnotherSaveDeleted
        case ownDeleteSaved, mergedDelete, mergedDeleteOfAChangedObject, automaticallyMergedDelete
        case mergePolicyRollbackOfADeletedRow
        case rollbackOfAnUpdate, rollbackOfAnInsert, reset, refreshAllObjects, containerClose
        case refreshOfAFault, refreshOfAnObjectWhoseDeletionWasSaved
    }

    /// What a path does to the object: hooks run (in order), and the state after.
    struct Outcome: Equatable, CustomStringConvertible {
        var hooks: [String]
        var isFault: Bool
        var isDeleted: Bool
        var registered: Bool
        /// objects-did-change named it deleted.
        var toldDeleted: Bool
        var description: String {
            "hooks \(hooks), fault \(isFault), deleted \(isDeleted), registered \(registered), told deleted \(toldDeleted)"
        }
    }

    static let fault = ["willTurnIntoFault", "didTurnIntoFault"]

    static func expected(_ path: Path) -> Outcome {
        switch path {
        case .refreshDroppingChanges, .refreshDroppingChangesOfAChangedObject, .refreshKeepingChangesOfAnUnchangedObject,
             .refreshAllObjects:
            return Outcome(hooks: fault, isFault: true, isDeleted: false, registered: true, toldDeleted: false)
        case .refreshKeepingChangesOfAChangedObject:
            return Outcome(hooks: ["awake"], isFault: false, isDeleted: false, registered: true, toldDeleted: false)
        case .refreshOfAnObjectAnotherSaveDeleted, .mergedDelete, .mergedDeleteOfAChangedObject, .automaticallyMergedDelete,
             .mergePolicyRollbackOfADeletedRow:
            return Outcome(hooks: fault, isFault: true, isDeleted: true, registered: true, toldDeleted: true)
        case .ownDeleteSaved:
            // Told deleted when deleted (before the save), not again by the save.
            return Outcome(hooks: ["prepareForDeletion", "willSave", "didSave"] + fault, isFault: true, isDeleted: true,
                           registered: true, toldDeleted: true)
        case .rollbackOfAnUpdate:
            return Outcome(hooks: ["awake"], isFault: false, isDeleted: false, registered: true, toldDeleted: false)
        case .refreshOfAFault:
            return Outcome(hooks: [], isFault: true, isDeleted: false, registered: true, toldDeleted: false)
        case .refreshOfAnObjectWhoseDeletionWasSaved:
            // Turned into a fault by the save (before the hooks were recorded): nothing more.
            return Outcome(hooks: [], isFault: true, isDeleted: true, registered: true, toldDeleted: true)
        case .rollbackOfAnInsert, .reset, .containerClose:
            // The object keeps its values; it leaves the context (reset, an insert rolled back)
            // or stays where it is (close): nothing turns into a fault.
            return Outcome(hooks: [], isFault: false, isDeleted: false, registered: path == .containerClose, toldDeleted: false)
        }
    }

    @Test(arguments: Path.allCases)
    func everyWayOutOfTheLoadedStateRunsWhatTheDocsSay(path: Path) throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            let other = ModelContext(container)
            let j = Journal()
            j.title = "Entry"
            context.insert(j)
            if path != .rollbackOfAnInsert { try context.save() }
            var toldDeleted = false
            let token = context.observeObjectsDidChange { change in if change.deletedObjects.contains(j) { toldDeleted = true } }
            defer { token.cancel() }
            /// Deletes the row through another context; returns that save.
            func deleteElsewhere() throws -> SaveNotification {
                try other.delete(try other.existingObject(with: j.objectID))
                return try #require(try other.save())
            }
            j.hooks = []
            switch path {
            case .refreshDroppingChanges:
                context.refresh(j, mergeChanges: false)
            case .refreshDroppingChangesOfAChangedObject:
                j.revision = 9
                context.refresh(j, mergeChanges: false)
            case .refreshKeepingChangesOfAnUnchangedObject:
                context.refresh(j, mergeChanges: true)
            case .refreshKeepingChangesOfAChangedObject:
                j.revision = 9
                context.refresh(j, mergeChanges: true)
                #expect(j.revision == 9)
            case .refreshOfAnObjectAnotherSaveDeleted:
                _ = try deleteElsewhere()
                j.revision = 9   // changed, so the refresh reads the row (and finds it gone)
                context.refresh(j, mergeChanges: true)
            case .ownDeleteSaved:
                try context.delete(j)
                try context.save()
            case .mergedDelete:
                context.mergeChanges(from: try deleteElsewhere())
            case .mergedDeleteOfAChangedObject:
                j.revision = 9
                context.mergeChanges(from: try deleteElsewhere())
                #expect(!context.hasChanges)
            case .automaticallyMergedDelete:
                context.automaticallyMergesChangesFromStore = true
                _ = try deleteElsewhere()
                context.processPendingChanges()
            case .mergePolicyRollbackOfADeletedRow:
                _ = try deleteElsewhere()
                j.revision = 9
                context.mergePolicy = .rollback
                j.hooks = []
                try context.save()
                j.hooks.removeAll { $0 == "willSave" || $0 == "didSave" }
            case .rollbackOfAnUpdate:
                j.revision = 9
                context.rollback()
            case .rollbackOfAnInsert:
                context.rollback()
            case .reset:
                context.reset()
            case .refreshAllObjects:
                context.refreshAllObjects()
            case .containerClose:
                try container.close()
            case .refreshOfAFault:
                context.refresh(j, mergeChanges: false)
                j.hooks = []
                context.refresh(j, mergeChanges: false)
                context.refresh(j, mergeChanges: true)
            case .refreshOfAnObjectWhoseDeletionWasSaved:
                try context.delete(j)
                try context.save()
                j.hooks = []
                context.refresh(j, mergeChanges: false)
                context.refresh(j, mergeChanges: true)
            }
            context.processPendingChanges()   // the end of the event: objects-did-change is told
            let got = Outcome(hooks: j.hooks, isFault: j.isFault, isDeleted: j.isDeleted, registered: j.context === context,
                              toldDeleted: toldDeleted)
            #expect(got == Self.expected(path), "\(path)")
            if path == .refreshDroppingChangesOfAChangedObject { #expect(!j.hasChanges && j.revision == 0) }
            if got.hooks.last == "didTurnIntoFault" { #expect(j.sawFaultInDidTurnIntoFault, "\(path): a fault by didTurnIntoFault") }
            if got.isFault && got.isDeleted {
                // Its row is gone: loading says so, and a read gives the placeholder, not a trap.
                #expect(throws: StrataError.objectNotFound(entity: "Journal", primaryKey: try #require(j.objectID.primaryKey))) {
                    try context.load(j)
                }
                #expect(j.title == "")
            }
        }
    }
}
