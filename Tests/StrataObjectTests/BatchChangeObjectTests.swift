import Foundation
import StrataRecords
import StrataStorage
import Testing
@testable import Strata

/// `ModelContainer.updateAll` and `deleteAll`: objects changed by predicate without being
/// made, and the contexts holding them told as of a save.
@Suite struct BatchChangeObjectTests {
    /// An invoice of five lines priced 1…5, saved; a second context holds it and its lines,
    /// merging automatically.
    func withInvoice(_ body: (ModelContainer, ModelContext, Invoice) throws -> Void) throws {
        try withContainer(for: [Invoice.self, InvoiceItem.self]) { container in
            let writer = ModelContext(container)
            let invoice = Invoice()
            invoice.number = "A-1"
            writer.insert(invoice)
            for price in 1...5 {
                let line = InvoiceItem(price: Decimal(price), quantity: 1)
                writer.insert(line)
                line.invoice = invoice
            }
            try writer.save()
            let reader = ModelContext(container)
            reader.automaticallyMergesChangesFromStore = true
            let held = try reader.existingObject(with: invoice.objectID, as: Invoice.self)
            #expect(held.items.count == 5 && held.total == 15)
            try body(container, reader, held)
        }
    }

    @Test func updatingByPredicateMovesDerivedValuesAndRefreshesHeldObjects() throws {
        try withInvoice { container, reader, invoice in
            let dear = FetchDescriptor<InvoiceItem>(predicate: try FetchPredicate(format: "itemPrice > 2"))
            #expect(try container.updateAll(dear, set: ["quantity": Int64(10)]) == 3)
            reader.processPendingChanges()
            #expect(invoice.items.map(\.quantity).sorted() == [1, 1, 10, 10, 10])
            #expect(invoice.total == Decimal(1 + 2 + 10 * (3 + 4 + 5)))
            let fresh = ModelContext(container)
            let tens = FetchDescriptor<InvoiceItem>(predicate: try FetchPredicate(format: "quantity == 10"))
            #expect(try fresh.fetchCount(tens) == 3)
        }
    }

    @Test func deletingByPredicateAppliesRulesAndFaultsHeldObjects() throws {
        try withInvoice { container, reader, invoice in
            let lines = invoice.items
            let cheap = FetchDescriptor<InvoiceItem>(predicate: try FetchPredicate(format: "itemPrice < 3"))
            #expect(try container.deleteAll(cheap) == 2)
            reader.processPendingChanges()
            #expect(invoice.lineCount == 3 && invoice.total == 12)
            #expect(lines.filter { $0.isDeleted || $0.isFault }.count >= 2)
            // The invoice's cascade takes the rest.
            #expect(try container.deleteAll(FetchDescriptor<Invoice>()) == 1)
            let fresh = ModelContext(container)
            let left = try fresh.fetchCount(FetchDescriptor<InvoiceItem>())
            #expect(left == 0)
        }
    }

    @Test func badInputIsATypedErrorAndChangesNothing() throws {
        try withInvoice { container, _, _ in
            var filtered = FetchDescriptor<InvoiceItem>()
            filtered.inMemoryFilter = { $0.quantity > 0 }
            #expect(throws: StrataError.self) { try container.deleteAll(filtered) }
            #expect(throws: StrataError.self) { try container.updateAll(FetchDescriptor<InvoiceItem>(), set: ["colour": "red"]) }
            #expect(throws: StrataError.self) { try container.updateAll(FetchDescriptor<InvoiceItem>(), set: ["total": Decimal(1)]) }
            let fresh = ModelContext(container)
            let left = try fresh.fetchCount(FetchDescriptor<InvoiceItem>())
            #expect(left == 5)
        }
    }
}
