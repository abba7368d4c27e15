import Foundation
@testable import Strata
import StrataTesting
import Testing

/// Saves committed close together can reach a context in the other order than they committed
/// (each saving thread posts after committing): a context takes them in commit order, and one
/// older than what it already took in never sends an object back to an older state (found by
/// `actorsAndTasksSaveConcurrentlyAndAMergingContextSeesEverySave` on a loaded machine: a
/// list's derived count went from 40 back to 30).
@Suite struct MergeOrderTests {
    /// Another context's save adding `count` items of `amount` to `list`.
    static func addItems(_ count: Int, amount: Decimal, to list: TodoList, in container: ModelContainer) throws -> SaveNotification {
        let other = ModelContext(container)
        let l = try other.existingObject(with: list.objectID, as: TodoList.self)
        l.items.formUnion((0..<count).map { Item(title: "item \($0)", amount: amount) })
        return try #require(try other.save())
    }

    /// Two saves of other contexts, each adding items to one list; the merging context gets them
    /// newest first, by hand and through its inbox; every order ends at the newest state.
    @Test(arguments: [false, true])
    func savesMergedNewestFirstLeaveTheNewestState(throughTheInbox: Bool) throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let main = ModelContext(container)
            let list = TodoList(name: "groceries")
            main.insert(list)
            try main.save()
            #expect(list.itemCount == 0)

            let older = try Self.addItems(10, amount: 1, to: list, in: container)
            let newer = try Self.addItems(5, amount: 1, to: list, in: container)
            #expect(older.transactionID < newer.transactionID)

            if throughTheInbox {
                main.inbox.post(newer)
                main.inbox.post(older)
                main.processPendingMerges()
            } else {
                main.mergeChanges(from: newer)
                main.mergeChanges(from: older)
            }
            #expect(list.itemCount == 15)
            #expect(list.total == 15)
            #expect(list.items.count == 15)

            // A later save of the context itself, then an older one merged: still the newest.
            list.name = "food"
            try main.save()
            main.mergeChanges(from: older)
            #expect(list.itemCount == 15)
            #expect(list.name == "food")
        }
    }

    /// A late save whose object was deleted since leaves it deleted.
    @Test func aLateSaveOfAnObjectDeletedSinceDoesNotBringItBack() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let main = ModelContext(container)
            let list = TodoList(name: "errands")
            main.insert(list)
            try main.save()
            let other = ModelContext(container)
            let l = try other.existingObject(with: list.objectID, as: TodoList.self)
            l.name = "renamed"
            let rename = try #require(try other.save())
            try other.delete(l)
            let deletion = try #require(try other.save())
            main.mergeChanges(from: deletion)
            main.mergeChanges(from: rename)
            #expect(list.isDeleted)
            #expect(list.name != "renamed")
        }
    }

    /// A context pinned to an older generation that merges a late save reads its rows at the
    /// newest commit, not at its pin: the objects keep the newest state they took in.
    @Test func aPinnedContextTakesALateSaveAtTheNewestCommit() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let main = ModelContext(container)
            let list = TodoList(name: "pinned")
            main.insert(list)
            try main.save()
            try main.pinQueryGeneration()
            let older = try Self.addItems(3, amount: 2, to: list, in: container)
            let newer = try Self.addItems(4, amount: 2, to: list, in: container)
            main.mergeChanges(from: newer)
            main.mergeChanges(from: older)
            #expect(list.itemCount == 7)
            #expect(list.total == 14)
        }
    }
}
