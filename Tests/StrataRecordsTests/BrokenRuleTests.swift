import Foundation
import Testing
import StrataStorage
import StrataTesting
@testable import StrataRecords

/// A commit refused by its checks names the row it refused on the transaction (``BrokenRule``),
/// for a caller applying rows it did not write; a commit that passes names none.
@Suite struct BrokenRuleTests {
    /// Runs `body` in a write that must fail, and returns what the transaction named.
    func broken(_ store: RecordStore, _ body: (RecordTransaction) throws -> Void) -> BrokenRule? {
        var transaction: RecordTransaction?
        do {
            try store.write { tx in
                transaction = tx
                try body(tx)
            }
            Issue.record("the commit went through")
        } catch {}
        return transaction?.brokenRule
    }

    @Test func eachCheckNamesTheRowItRefused() throws {
        let store = try makeStore(try todoModel())
        let (tag, list, item) = try store.write { tx in
            let tag = try tx.insert("Tag", ["label": "taken"])
            let list = try tx.insert("TodoList", ["name": "l"])
            let item = try tx.insert("Item", ["title": "t", "list": list])
            return (tag, list, item)
        }
        var second: ObjectID?
        let duplicate = broken(store) { tx in
            _ = try tx.insert("Tag", ["label": "other"])
            second = try tx.insert("Tag", ["label": "taken"])
        }
        #expect(duplicate == BrokenRule(row: second!, rule: .unique(0), holder: tag))
        let missing = broken(store) { tx in
            _ = try tx.insert("Item", ["title": "fine", "list": list])
            try tx.update(item, ["title": StoredValue.null])
        }
        #expect(missing == BrokenRule(row: item, rule: .validation, holder: nil))
        // A commit that passes after one that failed names nothing.
        var passed: RecordTransaction?
        try store.write { tx in
            passed = tx
            try tx.update(item, ["title": "again"])
        }
        #expect(passed?.brokenRule == nil)
    }

    @Test func aDenyRuleNamesTheDeletedRowAndOneItReaches() throws {
        let store = try makeStore(try DeleteRuleTests.model())
        let (user, folder) = try store.write { tx in
            let user = try tx.insert("User", ["name": "u"])
            let folder = try tx.insert("Folder", ["name": "f", "owner": user])
            return (user, folder)
        }
        #expect(broken(store) { try $0.delete(user) } == BrokenRule(row: user, rule: .deny, holder: folder))
    }
}
