import Foundation
import Strata
import Synchronization

// Models of the object-layer tests besides TodoList/Item (ObjectLayerTests.swift).

/// Seed 003's invoice: a line's total is price × quantity, the invoice's total sums its lines.
final class Invoice: ManagedObject {
    @Attribute var number: String
    @Relationship(deleteRule: .cascade, inverse: \InvoiceItem.invoice) var items: [InvoiceItem]
    @Derived("items.total.@sum") var total: Decimal
    @Derived("items.@count") var lineCount: Int64
}

final class InvoiceItem: ManagedObject {
    @Attribute var itemPrice: Decimal
    @Attribute(default: 1) var quantity: Int64
    @Relationship var invoice: Invoice?
    @Derived("itemPrice * quantity") var total: Decimal

    convenience init(price: Decimal, quantity: Int64) {
        self.init()
        itemPrice = price
        self.quantity = quantity
    }
}

/// Records every lifecycle hook it runs, in order.
final class Journal: ManagedObject {
    @Attribute var title: String
    @Attribute(default: 0) var revision: Int64
    @Attribute var stamp: String?

    var hooks: [String] = []
    var snapshotEvents: [SnapshotEvents] = []
    /// willSave bumps `revision` while this is above zero (a loop test sets it high).
    var bumpsLeft = 0
    var sawFaultInDidTurnIntoFault = false

    override func awakeFromInsert() { hooks.append("awakeFromInsert"); stamp = "inserted" }
    override func awakeFromFetch() { hooks.append("awakeFromFetch") }
    override func awake(fromSnapshotEvents events: SnapshotEvents) { hooks.append("awake"); snapshotEvents.append(events) }
    override func willSave() {
        hooks.append("willSave")
        if bumpsLeft > 0 { bumpsLeft -= 1; revision += 1 }
    }
    override func didSave() { hooks.append("didSave") }
    override func prepareForDeletion() { hooks.append("prepareForDeletion") }
    override func willTurnIntoFault() { hooks.append("willTurnIntoFault") }
    override func didTurnIntoFault() { hooks.append("didTurnIntoFault"); sawFaultInDidTurnIntoFault = isFault }
}

/// A container over a fresh store with `classes`, closed afterwards.
func withContainer<T>(for classes: [ManagedObject.Type], _ body: (ModelContainer) throws -> T) throws -> T {
    try withStorePath { path in
        let container = try ModelContainer(for: classes, path: path)
        defer { try? container.close() }
        return try body(container)
    }
}

/// Keeps the save notifications a container announces.
final class SaveRecorder: Sendable {
    private let notifications = Mutex<[SaveNotification]>([])

    init(_ container: ModelContainer) {
        container.addSaveObserver { [self] n in notifications.withLock { $0.append(n) } }
    }

    var all: [SaveNotification] { notifications.withLock { $0 } }
    var last: SaveNotification? { all.last }
}
