import Foundation
import Strata
import Testing

/// Documented errors: each public method of the container, the context and the object, in each
/// state a caller can get it into by mistake, throws the error its doc names (or does what the doc
/// says instead). The table is every operation × every state; a new operation or state is one row
/// or column, and every cell must be filled.
@Suite struct DocumentedErrorTests {
    /// What a call is documented to do in a state.
    enum Expect: Equatable, CustomStringConvertible {
        case succeeds
        case misuse
        case objectNotFound
        /// Nothing thrown now: the misuse is recorded and the next save throws it.
        case misuseAtSave
        var description: String {
            switch self {
            case .succeeds: return "succeeds"
            case .misuse: return "misuse"
            case .objectNotFound: return "objectNotFound"
            case .misuseAtSave: return "misuse at the next save"
            }
        }
    }

    enum State: String, CaseIterable, Sendable {
        /// The context's container was closed.
        case containerClosed
        /// The object is deleted in its context, not saved.
        case objectDeleted
        /// The object's deletion was saved.
        case objectDeletedAndSaved
        /// The object belongs to another context of the same container.
        case objectOfAnotherContext
        /// The object belongs to a context of another container.
        case objectOfAnotherContainer
    }

    /// The world a call runs in: `context` is the caller's, `object` the argument (a saved
    /// Journal, loaded), `peer` a saved Journal of `context`.
    struct World {
        var container: ModelContainer
        var context: ModelContext
        var object: Journal
        var peer: Journal
        /// The save that wrote `object` (by its owner: another context or container in those states).
        var objectSave: SaveNotification
    }

    struct Operation: Sendable {
        var name: String
        var call: @Sendable (World) throws -> Void
        var expect: @Sendable (State) -> Expect
    }

    static let operations: [Operation] = [
        Operation(name: "fetch", call: { w in _ = try w.context.fetch(FetchDescriptor<Journal>()) },
                  expect: { $0 == .containerClosed ? .misuse : .succeeds }),
        Operation(name: "fetchCount", call: { w in _ = try w.context.fetchCount(FetchDescriptor<Journal>()) },
                  expect: { $0 == .containerClosed ? .misuse : .succeeds }),
        Operation(name: "fetchIdentifiers", call: { w in _ = try w.context.fetchIdentifiers(FetchDescriptor<Journal>()) },
                  expect: { $0 == .containerClosed ? .misuse : .succeeds }),
        Operation(name: "save", call: { w in w.peer.revision += 1; try w.context.save() },
                  expect: { $0 == .containerClosed ? .misuse : .succeeds }),
        Operation(name: "load", call: { w in try w.context.load(w.object) }, expect: { state in
            switch state {
            case .containerClosed, .objectDeleted: return .succeeds   // loaded already: nothing to read
            case .objectDeletedAndSaved: return .objectNotFound
            case .objectOfAnotherContext, .objectOfAnotherContainer: return .misuse
            }
        }),
        Operation(name: "existingObject(with:)", call: { w in _ = try w.context.existingObject(with: w.object.objectID) },
                  expect: { state in
            switch state {
            case .containerClosed: return .succeeds   // registered and loaded: nothing to read
            case .objectDeleted, .objectDeletedAndSaved: return .objectNotFound
            // The context's own object for that identifier. (An identifier names an entity and a
            // primary key, not a store: one of another store of the same model is taken as this
            // store's.)
            case .objectOfAnotherContext, .objectOfAnotherContainer: return .succeeds
            }
        }),
        Operation(name: "delete", call: { w in try w.context.delete(w.object) }, expect: { state in
            switch state {
            case .containerClosed, .objectDeleted, .objectDeletedAndSaved: return .succeeds
            case .objectOfAnotherContext, .objectOfAnotherContainer: return .misuse
            }
        }),
        Operation(name: "insert", call: { w in w.context.insert(w.object) }, expect: { state in
            switch state {
            case .objectOfAnotherContext, .objectOfAnotherContainer: return .misuseAtSave
            case .containerClosed: return .misuse   // the save it is checked by refuses first
            default: return .succeeds
            }
        }),
        Operation(name: "obtainPermanentIDs", call: { w in try w.context.obtainPermanentIDs(for: [w.object]) }, expect: { state in
            switch state {
            case .containerClosed, .objectOfAnotherContext, .objectOfAnotherContainer: return .misuse
            default: return .succeeds
            }
        }),
        Operation(name: "pinQueryGeneration", call: { w in try w.context.pinQueryGeneration() },
                  expect: { $0 == .containerClosed ? .misuse : .succeeds }),
        Operation(name: "setValue(_:forKey:)", call: { w in try w.object.setValue(Int64(5), forKey: "revision") },
                  expect: { state in
            switch state {
            case .objectDeleted, .objectDeletedAndSaved: return .misuse
            case .containerClosed: return .misuse   // at the save that would write it
            default: return .succeeds
            }
        }),
        Operation(name: "typed setter", call: { w in w.object.revision = 5 }, expect: { state in
            switch state {
            case .objectDeleted, .objectDeletedAndSaved, .containerClosed: return .misuseAtSave
            default: return .succeeds
            }
        }),
        Operation(name: "committedValues(forKeys:)", call: { w in _ = try w.object.committedValues(forKeys: ["title"]) },
                  expect: { _ in .succeeds }),
        Operation(name: "value(forKey:)", call: { w in _ = try w.object.value(forKey: "title") }, expect: { _ in .succeeds }),
        Operation(name: "primitiveValue(forKey:)", call: { w in _ = try w.object.primitiveValue(forKey: "title") },
                  expect: { _ in .succeeds }),
        Operation(name: "setPrimitiveValue(_:forKey:)", call: { w in try w.object.setPrimitiveValue("x", forKey: "title") },
                  expect: { state in
            switch state {
            case .objectDeleted, .objectDeletedAndSaved: return .misuse
            case .containerClosed: return .misuse   // at the save that would write it
            default: return .succeeds
            }
        }),
        // Calls that cannot throw do what their docs say in every state (no store access after
        // close; another context's object is ignored); a save of another container cannot be
        // merged: recorded, and the next save throws it.
        Operation(name: "mergeChanges(from:)", call: { w in w.context.mergeChanges(from: w.objectSave) },
                  expect: { $0 == .objectOfAnotherContainer ? .misuseAtSave : .succeeds }),
        Operation(name: "refresh(_:mergeChanges:)", call: { w in w.context.refresh(w.object, mergeChanges: false) },
                  expect: { _ in .succeeds }),
        Operation(name: "rollback", call: { w in w.context.rollback() }, expect: { _ in .succeeds }),
        Operation(name: "reset", call: { w in w.context.reset() }, expect: { _ in .succeeds }),
        Operation(name: "refreshAllObjects", call: { w in w.context.refreshAllObjects() }, expect: { _ in .succeeds }),
        Operation(name: "processPendingChanges", call: { w in w.context.processPendingChanges() }, expect: { _ in .succeeds }),
        Operation(name: "container.close() again", call: { w in try w.container.close() }, expect: { _ in .succeeds }),
    ]

    /// Makes the world of `state`.
    static func world(_ state: State, _ container: ModelContainer, _ elsewhere: ModelContainer) throws -> World {
        let context = ModelContext(container)
        let peer = Journal()
        peer.title = "peer"
        context.insert(peer)
        let object = Journal()
        object.title = "object"
        var objectSave: SaveNotification?
        switch state {
        case .objectOfAnotherContext:
            let owner = ModelContext(container)
            owner.insert(object)
            objectSave = try owner.save()
        case .objectOfAnotherContainer:
            let owner = ModelContext(elsewhere)
            owner.insert(object)
            objectSave = try owner.save()
        default:
            context.insert(object)
        }
        let save = try context.save()
        objectSave = objectSave ?? save
        switch state {
        case .containerClosed: try container.close()
        case .objectDeleted: try context.delete(object)
        case .objectDeletedAndSaved: try context.delete(object); try context.save()
        default: break
        }
        return World(container: container, context: context, object: object, peer: peer, objectSave: try #require(objectSave))
    }

    @Test(arguments: State.allCases)
    func everyOperationThrowsWhatItsDocNames(state: State) throws {
        for operation in Self.operations {
            try withContainer(for: [Journal.self]) { container in
                try withContainer(for: [Journal.self]) { elsewhere in
                    let w = try Self.world(state, container, elsewhere)
                    let expected = operation.expect(state)
                    var got: Expect
                    do {
                        try operation.call(w)
                        got = .succeeds
                        if expected == .misuseAtSave || expected == .misuse {
                            // A setter that cannot throw records the misuse for the next save.
                            do { try w.context.save(); got = .succeeds } catch let e as StrataError {
                                if case .misuse = e { got = expected == .misuse ? .misuse : .misuseAtSave } else { got = .succeeds }
                            }
                        }
                    } catch let e as StrataError {
                        switch e {
                        case .misuse: got = .misuse
                        case .objectNotFound: got = .objectNotFound
                        default: Issue.record("\(operation.name) in \(state): \(e)"); return
                        }
                    }
                    #expect(got == expected, "\(operation.name) when \(state): \(got), documented \(expected)")
                }
            }
        }
    }
}
