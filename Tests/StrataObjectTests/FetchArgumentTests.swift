import Foundation
import Strata
import Testing

/// A fetch descriptor's numbers come from callers: out-of-range ones throw `invalidFetch`
/// instead of trapping in the record layer's slicing and arithmetic.
@Suite struct FetchArgumentTests {
    /// A negative offset sliced the results from a negative index and a negative limit made a
    /// range whose end was below its start (both traps); a limit of `Int.max` with an offset
    /// overflowed their sum (a trap) where it means "no limit".
    @Test func negativeOffsetsAndLimitsThrowAndHugeLimitsMeanNone() throws {
        try withContainer { container in
            let context = ModelContext(container)
            for i in 0..<4 { context.insert(Item(title: "i\(i)", amount: Decimal(i))) }
            try context.save()
            let cases: [(offset: Int, limit: Int?)] = [(-1, nil), (0, -1), (-5, 2), (.min, .min)]
            for pending in [false, true] {
                if pending { context.insert(Item(title: "pending")) }   // the pending-changes path
                for c in cases {
                    var d = FetchDescriptor<Item>()
                    d.fetchOffset = c.offset
                    d.fetchLimit = c.limit
                    for (name, run) in [("fetch", { _ = try context.fetch(d) }), ("fetchCount", { _ = try context.fetchCount(d) }),
                                        ("fetchIdentifiers", { _ = try context.fetchIdentifiers(d) })] as [(String, () throws -> Void)] {
                        do {
                            try run()
                            Issue.record("\(name) offset \(c.offset) limit \(String(describing: c.limit)) pending \(pending): accepted")
                        } catch StrataError.invalidFetch {
                        } catch {
                            Issue.record("\(name) offset \(c.offset): \(error), not invalidFetch")
                        }
                    }
                }
                let total = pending ? 5 : 4
                for offset in [0, 1, 3] {
                    var d = FetchDescriptor<Item>()
                    d.fetchOffset = offset
                    d.fetchLimit = .max
                    #expect(try context.fetch(d).count == total - offset, "offset \(offset) pending \(pending)")
                    d.sortBy = [FetchSortDescriptor(\Item.amount)]
                    #expect(try context.fetchCount(d) == total - offset)
                }
            }
        }
    }

    /// A descriptor with `$variables` is a template: `substituting` gives its values (with
    /// pending changes too); run without them, it says what is missing and how to give it.
    @Test func templatesTakeValues() throws {
        try withContainer { container in
            let context = ModelContext(container)
            for i in 0..<6 { context.insert(Item(title: "i\(i)", amount: Decimal(i))) }
            try context.save()
            let template = FetchDescriptor<Item>(predicate: try FetchPredicate(format: "amount >= $least"), sortBy: [FetchSortDescriptor(\Item.amount)])
            #expect(try context.fetch(try template.substituting(["least": .int(4)])).map(\.title) == ["i4", "i5"])
            context.insert(Item(title: "pending", amount: 9))
            #expect(try context.fetch(try template.substituting(["least": .decimal(5)])).map(\.title) == ["i5", "pending"])
            #expect(try context.fetchCount(try template.substituting(["least": .double(0.5)])) == 6)
            do {
                _ = try context.fetch(template)
                Issue.record("a template ran without values")
            } catch StrataError.invalidFetch(let message) {
                #expect(message.contains("$least has no value") && message.contains("FetchDescriptor.substituting"), "\(message)")
            }
            #expect(throws: StrataError.self) { _ = try template.substituting(["most": .int(1)]) }
        }
    }
}
