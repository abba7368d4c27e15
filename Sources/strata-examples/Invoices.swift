import ArgumentParser
import Foundation
import Strata

/// Seed 003: an invoice item's `total = itemPrice × quantity`, and the invoice's total over
/// its items' totals — derived over derived, kept by the store, observable after each save.
final class Invoice: ManagedObject {
    @Attribute var number: String
    @Relationship(deleteRule: .cascade, inverse: \LineItem.invoice) var items: [LineItem]
    @Derived("items.total.@sum") var total: Decimal
    @Derived("items.@count") var lineCount: Int64
}

final class LineItem: ManagedObject {
    @Attribute var itemPrice: Decimal
    @Attribute(default: 1) var quantity: Int64
    @Relationship var invoice: Invoice?
    @Derived("itemPrice * quantity") var total: Decimal
}

struct Invoices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invoice",
        abstract: "Invoice.total over its line items' totals (derived over derived), observed as saves move it."
    )

    func run() throws {
        begin("invoice: a total over line items, each a derived product (seed 003)")
        try withStorePath("invoices") { path in
            let container = try ModelContainer(for: [Invoice.self, LineItem.self], path: path)
            defer { try? container.close() }
            let context = ModelContext(container)
            let invoice = Invoice()
            invoice.number = "2026-001"
            context.insert(invoice)
            let pens = LineItem(), paper = LineItem()
            pens.itemPrice = Decimal(string: "1.25")!
            pens.quantity = 4
            paper.itemPrice = Decimal(string: "7.90")!
            for item in [pens, paper] { item.invoice = invoice }
            try context.save()
            say("4 pens at 1.25 and 1 ream of paper at 7.90")
            try show("pens.total", pens.total, expected: 5)
            try show("paper.total", paper.total, expected: Decimal(string: "7.9")!)
            try show("invoice.total", invoice.total, expected: Decimal(string: "12.9")!)
            try show("invoice.lineCount", invoice.lineCount, expected: 2)

            var told: [Decimal] = []
            let token = try invoice.observe(\.total) { _, change in change.newValue.map { told.append($0) } }
            pens.quantity = 10
            try context.save()
            say("10 pens instead of 4: the save moves both derived levels and tells the invoice's observer")
            try show("pens.total", pens.total, expected: Decimal(string: "12.5")!)
            try show("invoice.total", invoice.total, expected: Decimal(string: "20.4")!)
            try show("invoice.total observer", told, expected: [Decimal(string: "20.4")!])

            try context.delete(paper)
            try context.save()
            say("the paper line deleted")
            try show("invoice.total", invoice.total, expected: Decimal(string: "12.5")!)
            try show("invoice.lineCount", invoice.lineCount, expected: 1)
            try show("invoice.total observer", told, expected: [Decimal(string: "20.4")!, Decimal(string: "12.5")!])
            token.cancel()
        }
    }
}
