import Foundation
import Strata
import Testing

/// One case per merge policy: context A changed `title` and `amount` of an item whose `title`
/// and `done` another context saved meanwhile. What the store and A's object hold afterwards.
@Suite struct MergePolicyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var policy: MergePolicy
        /// Expected (title, amount, done) in the store and in A's object after the save; nil: the
        /// save throws `mergeConflicts` and the store keeps the other save's values.
        var outcome: (String, Decimal, Bool)?
        var testDescription: String { "\(policy)" }
    }

    static let cases: [Case] = [
        Case(policy: .error, outcome: nil),
        Case(policy: .mergeByPropertyStoreTrump, outcome: ("Espresso", 2, true)),
        Case(policy: .mergeByPropertyObjectTrump, outcome: ("Latte", 2, true)),
        Case(policy: .overwrite, outcome: ("Latte", 2, false)),
        Case(policy: .rollback, outcome: ("Espresso", 1, true)),
    ]

    @Test(arguments: cases) func conflictingSave(_ c: Case) throws {
        try withContainer { container in
            let a = ModelContext(container)
            let item = Item(title: "Coffee", amount: 1)
            a.insert(item)
            try a.save()
            let b = ModelContext(container)
            let theirs = try b.existingObject(with: item.objectID, as: Item.self)
            theirs.title = "Espresso"
            theirs.done = true
            try b.save()

            item.title = "Latte"
            item.amount = 2
            a.mergePolicy = c.policy
            let check = ModelContext(container)
            guard let (title, amount, done) = c.outcome else {
                do {
                    try a.save()
                    Issue.record("no conflict reported")
                } catch StrataError.mergeConflicts(let list) {
                    #expect(list.count == 1)
                    let r = try #require(list.first)
                    #expect(r.entity == "Item" && r.primaryKey == item.objectID.primaryKey)
                    // The properties the other save changed under this context's snapshot.
                    #expect(r.properties == ["title", "done"])
                    #expect(r.snapshot["title"] == "\"Coffee\"")
                    #expect(r.cached["title"] == "\"Latte\"")
                    #expect(r.persisted?["title"] == "\"Espresso\"")
                }
                #expect(item.isUpdated && item.title == "Latte")    // the context is unchanged
                let stored = try check.existingObject(with: item.objectID, as: Item.self)
                #expect(stored.title == "Espresso" && stored.amount == 1 && stored.done)
                return
            }
            try a.save()
            let stored = try check.existingObject(with: item.objectID, as: Item.self)
            #expect((stored.title, stored.amount, stored.done) == (title, amount, done), "store")
            #expect((item.title, item.amount, item.done) == (title, amount, done), "object")
            #expect(!a.hasChanges)
            // A second save right away has nothing to conflict with.
            item.amount = 9
            a.mergePolicy = .error
            try a.save()
        }
    }

    @Test func errorPolicyListsEveryConflictAndADeletedRow() throws {
        try withContainer { container in
            let a = ModelContext(container)
            let items = (0..<3).map { Item(title: "t\($0)") }
            for i in items { a.insert(i) }
            try a.save()
            let b = ModelContext(container)
            for (n, i) in items.enumerated() {
                let o = try b.existingObject(with: i.objectID, as: Item.self)
                if n == 2 { try b.delete(o) } else { o.title = "b\(n)" }
            }
            try b.save()
            for i in items { i.title += "-a" }
            do {
                try a.save()
                Issue.record("no conflicts reported")
            } catch StrataError.mergeConflicts(let list) {
                #expect(list.count == 3)
                #expect(list.filter { $0.persisted == nil }.count == 1)   // the deleted one
            }
        }
    }
}
