import Foundation
import Strata
import Testing

/// Seed 004: "You can safely invoke the following methods and properties on a fault without
/// causing it to fire". One case per call (their Swift forms), each on a fresh fault, counted by
/// the rows the context reads.
@Suite struct FaultingTests {
    enum Call: String, CaseIterable, Sendable {
        case isEqual, hash, identity, typeOf, isKindOf, isMemberOf, conformsTo, description
        case context, entityName, objectID, isInserted, isUpdated, isDeleted, faultingState, isFault
        // Beyond the seed's list: state a Swift user reaches for, never firing either.
        case hasChanges, putInASet, changedValues, changedValuesForCurrentEvent, hasPersistentChangedValues
        case toManyObjectIDs, toManyHasFault, registeredObjects

        func run(on list: TodoList, in context: ModelContext) throws {
            switch self {
            case .isEqual: _ = list == list
            case .hash: var h = Hasher(); list.hash(into: &h); _ = list.hashValue
            case .identity: _ = list === list
            case .typeOf: _ = type(of: list)
            case .isKindOf: _ = (list as ManagedObject) is TodoList
            case .isMemberOf: _ = type(of: list) == TodoList.self
            case .conformsTo: _ = (list as Any) is any Hashable
            case .description: _ = list.description
            case .context: _ = list.context
            case .entityName: _ = list.entityName
            case .objectID: _ = list.objectID
            case .isInserted: _ = list.isInserted
            case .isUpdated: _ = list.isUpdated
            case .isDeleted: _ = list.isDeleted
            case .faultingState: _ = list.faultingState
            case .isFault: _ = list.isFault
            case .hasChanges: _ = list.hasChanges
            case .putInASet: _ = Set([list, list])
            case .changedValues: _ = list.changedValues()
            case .changedValuesForCurrentEvent: _ = list.changedValuesForCurrentEvent()
            case .hasPersistentChangedValues: _ = list.hasPersistentChangedValues
            case .toManyObjectIDs: _ = try list.objectIDs(forRelationshipNamed: "items")
            case .toManyHasFault: _ = try list.hasFault(forRelationshipNamed: "items")
            case .registeredObjects: _ = context.registeredObjects
            }
        }
    }

    @Test(arguments: Call.allCases) func callDoesNotFireAFault(_ call: Call) throws {
        try withContainer { container in
            let writer = ModelContext(container)
            let list = TodoList(name: "Faults")
            writer.insert(list)
            for i in 0..<3 { list.items.insert(Item(title: "i\(i)")) }
            try writer.save()

            let reader = ModelContext(container)
            let fault = try #require(try reader.fetch(FetchDescriptor<TodoList>()).first)
            #expect(fault.isFault)
            try call.run(on: fault, in: reader)
            #expect(fault.isFault, "\(call) fired the fault")
            #expect(reader.statistics.faultsFired == 0, "\(call) read a row")
            _ = fault.name                              // and the counter does count
            #expect(reader.statistics.faultsFired == 1)
        }
    }

    @Test func toManyCountReadsNoMemberRow() throws {
        try withContainer { container in
            let writer = ModelContext(container)
            let list = TodoList(name: "Count")
            writer.insert(list)
            for i in 0..<50 { list.items.insert(Item(title: "i\(i)")) }
            try writer.save()
            let reader = ModelContext(container)
            let l = try reader.existingObject(with: list.objectID, as: TodoList.self)
            #expect(reader.statistics.faultsFired == 1)
            #expect(l.items.count == 50)
            #expect(l.items.allSatisfy { $0.isFault })
            #expect(reader.statistics.faultsFired == 1)
        }
    }

    @Test func aFaultWhoseRowIsGoneReadsPlaceholdersAndLoadThrows() throws {
        try withContainer { container in
            let writer = ModelContext(container)
            let item = Item(title: "Gone soon", amount: 5)
            writer.insert(item)
            try writer.save()
            let reader = ModelContext(container)
            let f = try reader.object(with: item.objectID) as! Item
            try writer.delete(item)
            try writer.save()
            #expect(f.title == "")                  // a placeholder, not a trap
            #expect(f.amount == 0)
            #expect(throws: StrataError.self) { try reader.load(f) }
            #expect(throws: StrataError.self) { try reader.existingObject(with: item.objectID) }
        }
    }

    @Test func objectsKeepTheirContextAlive() throws {
        try withContainer { container in
            let writer = ModelContext(container)
            for i in 0..<3 { writer.insert(Item(title: "i\(i)", amount: Decimal(i))) }
            try writer.save()
            // The contexts are temporaries: released at once but for their objects.
            let items = try ModelContext(container).fetch(FetchDescriptor<Item>(sortBy: [FetchSortDescriptor(\Item.title)]))
            #expect(items.map(\.title) == ["i0", "i1", "i2"])      // faults still fire
            func lookUp(_ id: ManagedObjectID) throws -> Item { try ModelContext(container).existingObject(with: id, as: Item.self) }
            let item = try lookUp(items[1].objectID)
            item.title = "changed"
            let context = try #require(item.context)
            #expect(context.hasChanges)
            try context.save()
            #expect(try ModelContext(container).existingObject(with: item.objectID, as: Item.self).title == "changed")
        }
    }

    @Test func unchangedObjectsTheProgramDropsAreReleasedChangedOnesKept() throws {
        try withContainer { container in
            let writer = ModelContext(container)
            for i in 0..<100 { writer.insert(Item(title: "i\(i)")) }
            try writer.save()
            let reader = ModelContext(container)
            do {
                let all = try reader.fetch(FetchDescriptor<Item>())
                #expect(all.count == 100)
                all[0].title = "changed"
                withExtendedLifetime(all) { #expect(reader.registeredObjects.count == 100) }
            }
            #expect(reader.registeredObjects.count == 1)      // only the changed one
            #expect(reader.updatedObjects.count == 1)
            try reader.save()
            #expect(reader.registeredObjects.isEmpty)
        }
    }
}

/// Seed 003 through the typed API: a line's total is price × quantity, the invoice's total
/// sums its lines; every change to a line moves the invoice's total at save.
@Suite struct InvoiceTests {
    @Test func invoiceTotalFollowsItsLines() throws {
        try withContainer(for: [Invoice.self, InvoiceItem.self]) { container in
            let context = ModelContext(container)
            let invoice = Invoice()
            invoice.number = "2026-001"
            let pens = InvoiceItem(price: Decimal(string: "1.25")!, quantity: 4)
            let paper = InvoiceItem(price: Decimal(string: "3.10")!, quantity: 2)
            invoice.items = [pens, paper]
            context.insert(invoice)
            try context.save()
            #expect(pens.total == 5)
            #expect(paper.total == Decimal(string: "6.2")!)
            #expect(invoice.total == Decimal(string: "11.2")!)
            #expect(invoice.lineCount == 2)

            paper.quantity = 10                        // a line changes: its total and the sum move
            try context.save()
            #expect(paper.total == 31)
            #expect(invoice.total == 36)

            let other = ModelContext(container)
            let seen = try other.existingObject(with: invoice.objectID, as: Invoice.self)
            #expect(seen.total == 36)
            other.automaticallyMergesChangesFromStore = true
            pens.itemPrice = 2
            try context.delete(paper)
            let ink = InvoiceItem(price: Decimal(string: "0.99")!, quantity: 1)
            ink.invoice = invoice
            try context.save()
            #expect(invoice.total == Decimal(string: "8.99")!)
            other.processPendingChanges()
            #expect(seen.total == Decimal(string: "8.99")!)   // merged, no refresh
            #expect(seen.lineCount == 2)
            #expect(seen.items.map(\.total).reduce(0, +) == seen.total)

            try context.delete(invoice)                // cascades to its lines
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<InvoiceItem>()) == 0)
        }
    }
}

/// Batch faulting and prefetching: many rows per read instead of one per object.
@Suite struct BatchFaultingTests {
    static func fill(_ container: ModelContainer) throws {
        let context = ModelContext(container)
        for l in 0..<5 {
            let list = TodoList(name: "L\(l)")
            context.insert(list)
            for i in 0..<20 { list.items.insert(Item(title: "L\(l)-\(i)", amount: Decimal(i))) }
        }
        try context.save()
    }

    /// Decision 47: the rows a fetch's scan decoded fulfil its faults without another read; a
    /// row read before another context's save is never used after it.
    @Test func faultsOfAFetchTakeTheRowsItsScanRead() throws {
        try withContainer { container in
            try Self.fill(container)
            let context = ModelContext(container)
            let items = try context.fetch(FetchDescriptor<Item>(predicate: try FetchPredicate(format: "title BEGINSWITH 'L1'")))
            #expect(items.count == 20 && items.allSatisfy(\.isFault))
            #expect(Set(items.map(\.title)).count == 20)
            #expect(context.statistics.faultsFired == 20 && context.statistics.rowReads == 0)

            let later = try context.fetch(FetchDescriptor<Item>(sortBy: [FetchSortDescriptor("title")]))
            let faults = later.filter(\.isFault)
            #expect(faults.count == 80)
            let writer = ModelContext(container)
            let renamed = try writer.existingObject(with: faults[0].objectID, as: Item.self)
            renamed.title = "renamed"
            try writer.save()
            #expect(faults[0].title == "renamed")           // read again: the scan's row was older
            #expect(context.statistics.rowReads == 1)
            _ = faults[1].title
            #expect(context.statistics.rowReads == 2)       // every cached row went with the commit
            withExtendedLifetime(items) {}                  // the first 20 stayed loaded throughout
        }
    }

    /// Objects returned loaded take the rows the fetch's scan read, however many (no second
    /// read); objects the context already holds loaded keep their values and changes; a fetch
    /// whose scan read no rows (an index answered it) loads its objects with one read.
    @Test func objectsReturnedLoadedTakeTheRowsTheScanRead() throws {
        try withContainer { container in
            try Self.fill(container)
            let context = ModelContext(container)
            let held = try context.fetch(FetchDescriptor<Item>(predicate: try FetchPredicate(format: "title == 'L0-3'")))[0]
            held.title = "changed, not saved"
            let before = context.statistics
            var d = FetchDescriptor<Item>(sortBy: [FetchSortDescriptor("title")])
            d.returnsObjectsAsFaults = false
            d.includesPendingChanges = false          // else the store's rows are not the answer
            let items = try context.fetch(d)
            #expect(items.count == 100 && items.allSatisfy { !$0.isFault })
            #expect(context.statistics.rowReads == before.rowReads)
            #expect(context.statistics.faultsFired == before.faultsFired + 99)
            #expect(items.contains { $0 === held } && held.title == "changed, not saved" && held.hasChanges)
            #expect(items.reduce(Decimal(0)) { $0 + $1.amount } == Decimal(5 * 190))

            // Over unsaved changes the fetch runs in a transaction rolled back, and its objects
            // are loaded with one read.
            let other = ModelContext(container)
            let pending = Item(title: "pending", amount: 1)
            other.insert(pending)
            let beforePending = other.statistics.rowReads
            d.includesPendingChanges = true
            let all = try other.fetch(d)
            #expect(all.count == 101 && all.allSatisfy { !$0.isFault } && all.contains { $0 === pending })
            #expect(other.statistics.rowReads == beforePending + 1)

            // An index answers this fetch alone (its scan reads no row): one read loads them.
            var byName = FetchDescriptor<TodoList>(predicate: try FetchPredicate(format: "searchName BEGINSWITH[cd] 'l'"),
                                                   sortBy: [FetchSortDescriptor("searchName")])
            byName.returnsObjectsAsFaults = false
            let reads = context.statistics.rowReads
            let lists = try context.fetch(byName)
            #expect(lists.count == 5 && lists.allSatisfy { !$0.isFault } && lists.map(\.name) == ["L0", "L1", "L2", "L3", "L4"])
            #expect(context.statistics.rowReads == reads + 1)

            // awakeFromFetch runs once for each object loaded from the scan, as when a fault fires.
            let journals = try withContainer(for: [Journal.self]) { journalContainer -> [String] in
                let writer = ModelContext(journalContainer)
                for title in ["a", "b", "c"] {
                    let j = Journal()
                    j.title = title
                    writer.insert(j)
                }
                try writer.save()
                let reader = ModelContext(journalContainer)
                var loaded = FetchDescriptor<Journal>(sortBy: [FetchSortDescriptor("title")])
                loaded.returnsObjectsAsFaults = false
                let fetched = try reader.fetch(loaded)
                #expect(fetched.allSatisfy { !$0.isFault && $0.hooks == ["awakeFromFetch"] })
                #expect(reader.statistics.rowReads == 0)
                return fetched.map(\.title)
            }
            #expect(journals == ["a", "b", "c"])
        }
    }

    @Test func theFirstFaultOfASliceLoadsTheSlice() throws {
        try withContainer { container in
            try Self.fill(container)
            let context = ModelContext(container)
            var d = FetchDescriptor<Item>(sortBy: [FetchSortDescriptor("title")])
            d.fetchBatchSize = 30
            let items = try context.fetch(d)
            #expect(items.count == 100 && items.allSatisfy { $0.isFault })
            _ = items[0].title
            #expect(context.statistics.faultsFired == 30 && context.statistics.rowReads == 1)
            #expect(items[0..<30].allSatisfy { !$0.isFault } && items[30...].allSatisfy { $0.isFault })
            _ = items[95].amount                         // the last slice: 10 objects
            #expect(context.statistics.faultsFired == 40 && context.statistics.rowReads == 2)
            let total = items.reduce(Decimal(0)) { $0 + $1.amount }
            #expect(total == Decimal(5 * 190), "\(total.exponent) \(total.significand) \(total - Decimal(950))")
            #expect(context.statistics.rowReads == 4)    // 100 objects, 4 slices, 4 reads
        }
    }

    @Test func prefetchingLoadsTargetsWithOneReadPerRelationship() throws {
        try withContainer { container in
            try Self.fill(container)
            let context = ModelContext(container)
            var d = FetchDescriptor<TodoList>()
            d.relationshipKeyPathsForPrefetching = ["items"]
            let lists = try context.fetch(d)
            #expect(context.statistics.rowReads == 1)     // the lists from the scan, then all their items' rows
            #expect(context.statistics.faultsFired == 5)
            #expect(lists.map { $0.items.count } == [20, 20, 20, 20, 20])
            let titles = lists.flatMap { $0.items.map(\.title) }
            #expect(Set(titles).count == 100)
            #expect(context.statistics.faultsFired == 105)
            #expect(context.statistics.rowReads == 1)     // the items' faults took the prefetched rows

            let other = ModelContext(container)
            var back = FetchDescriptor<Item>()
            back.relationshipKeyPathsForPrefetching = ["list"]
            let items = try other.fetch(back)
            #expect(other.statistics.rowReads == 1)       // the items from the scan, then their 5 lists
            #expect(Set(items.compactMap { $0.list?.name }).count == 5)
            #expect(other.statistics.rowReads == 1)
            back.relationshipKeyPathsForPrefetching = ["title"]
            #expect(throws: StrataError.self) { try other.fetch(back) }
        }
    }

    @Test func aBatchWithDeletedRowsLoadsTheRestAndRecordsTheGoneOnes() throws {
        try withContainer { container in
            try Self.fill(container)
            let context = ModelContext(container)
            var d = FetchDescriptor<Item>()
            d.fetchBatchSize = 10
            let items = try context.fetch(d)
            let writer = ModelContext(container)
            try writer.delete(try writer.existingObject(with: items[3].objectID))
            try writer.save()
            _ = items[0].title
            #expect(items[0..<10].allSatisfy { !$0.isFault })
            #expect(items[3].title == "")
            #expect(throws: StrataError.self) { try context.load(items[3]) }
            #expect(items[4].title != "")
        }
    }
}
