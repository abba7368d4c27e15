import Foundation
import Strata
import Testing

/// Persistent history through the object layer: a container records it by default, filters it
/// by entity and author, and a context merges a history transaction as it merges a save.
@Suite struct ObjectHistoryTests {
    @Test func aContainerRecordsEverySaveWithItsAuthor() throws {
        try withContainer(for: [Invoice.self, InvoiceItem.self]) { container in
            let context = ModelContext(container)
            context.author = "editor"
            let invoice = Invoice()
            invoice.number = "A-1"
            context.insert(invoice)
            invoice.items.append(InvoiceItem(price: 10, quantity: 2))
            try context.save()
            let importer = ModelContext(container)
            importer.author = "importer"
            let line = InvoiceItem(price: 5, quantity: 1)
            importer.insert(line)
            try importer.save()

            let history = try container.history()
            #expect(history.map(\.author) == ["editor", "importer"])
            #expect(try container.lastHistoryToken() == history[1].token)
            let first = history[0].changes
            let saved = try #require(first.first { $0.id.entity == "Invoice" })
            #expect(saved.kind == .insert && saved.values["number"] == .string("A-1"))
            #expect(saved.values["total"] == .decimal(20) && saved.derivedNames.contains("total"))
            // Filtered by entity: changes of other entities are left out, empty transactions too.
            let invoices = try container.history(entities: [Invoice.self])
            #expect(invoices.count == 1 && invoices[0].changes.allSatisfy { $0.id.entity == "Invoice" })
            #expect(try container.history(authors: ["importer"]).map(\.token) == [history[1].token])
            #expect(try container.history(after: history[0].token).count == 1)
            #expect(try container.history(limit: 1).count == 1)
            #expect(try container.purgeHistory(through: history[0].token) == 1)
            #expect(throws: StrataError.self) { try container.history(after: .start) }
        }
    }

    @Test func aContextMergesAHistoryTransaction() throws {
        try withContainer(for: [Invoice.self, InvoiceItem.self]) { container in
            let writer = ModelContext(container)
            let invoice = Invoice()
            invoice.number = "B-1"
            writer.insert(invoice)
            let line = InvoiceItem(price: 3, quantity: 1)
            invoice.items.append(line)
            try writer.save()
            let seen = try container.lastHistoryToken()

            let reader = ModelContext(container)   // merges nothing by itself
            let readInvoice = try #require(try reader.fetch(FetchDescriptor<Invoice>()).first)
            let readLine = try #require(try reader.fetch(FetchDescriptor<InvoiceItem>()).first)
            #expect(readInvoice.total == 3)
            var told: [ObjectsDidChange] = []
            let token = reader.observeObjectsDidChange { told.append($0) }
            defer { token.cancel() }

            line.quantity = 4                                          // total 12
            try writer.save()
            try writer.delete(line)
            try writer.save()
            let since = try container.history(after: seen)
            #expect(since.count == 2)
            reader.mergeChanges(from: since[0])
            // Values are read from the store as it is now: the line is already gone there.
            #expect(readInvoice.total == 0 && readInvoice.lineCount == 0)
            reader.mergeChanges(from: since[1])
            #expect(readLine.isDeleted || readLine.isFault)
            #expect(!told.isEmpty)
            #expect(told.contains { $0.updatedObjects.contains(readInvoice) })
        }
    }

    @Test func historyOffRecordsNothing() throws {
        try withStorePath { path in
            let container = try ModelContainer(for: [Invoice.self, InvoiceItem.self], path: path, history: .off)
            defer { try? container.close() }
            let context = ModelContext(container)
            let invoice = Invoice()
            invoice.number = "C-1"
            context.insert(invoice)
            try context.save()
            #expect(try container.history().isEmpty)
            #expect(try !container.store.isRecordingHistory())
        }
    }
}
