import Foundation
import Observation
import Strata
import Testing

/// Computed and cached properties with declared dependencies (decision 34), and the
/// observation of every kind of property.
@Suite struct ComputedPropertyTests {
    private func person(_ context: ModelContext, _ first: String = "Ada", _ last: String = "Lovelace") -> Person {
        let p = Person()
        p.firstName = first
        p.lastName = last
        context.insert(p)
        return p
    }

    @Test func computedReadsAndWritesThrough_declaredInAnExtension() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let p = person(context)
            #expect(p.fullName == "Ada Lovelace")
            p.fullName = "Grace Hopper"
            #expect(p.firstName == "Grace" && p.lastName == "Hopper")
            #expect(p.changedValues().keys.sorted() == ["firstName", "lastName"])
            try context.save()
            context.processPendingChanges()
            p.firstName = "Anita"
            let event = p.changedValuesForCurrentEvent()
            #expect(event.keys.sorted() == ["firstName", "fullName", "initials", "teamLabel"].filter { event[$0] != nil })
            #expect(event.keys.contains("fullName") && event["firstName"] as? String == "Anita")
        }
    }

    @Test func cachedValuesAreKeptUntilADependencyChanges() throws {
        try withContainer(for: [Place.self]) { container in
            let context = ModelContext(container)
            let place = Place()
            place.latitude = 48.85
            place.longitude = 2.35
            context.insert(place)
            try context.save()
            context.processPendingChanges()
            #expect(place.coreLocation == Coordinate(latitude: 48.85, longitude: 2.35))
            #expect(place.coreLocation.latitude == 48.85)
            #expect(place.builds == 1)
            place.latitude = 51.5
            // Seed 000, comment 5: the invalidated cache shows in the current event.
            #expect(place.changedValuesForCurrentEvent().keys.sorted() == ["coreLocation", "latitude"])
            #expect(place.coreLocation == Coordinate(latitude: 51.5, longitude: 2.35))
            #expect(place.builds == 2)
            // Rollback restores the latitude: the cache follows.
            context.rollback()
            #expect(place.coreLocation.latitude == 48.85 && place.builds == 3)
            // A fault drops its caches.
            context.refresh(place, mergeChanges: false)
            #expect(place.coreLocation.latitude == 48.85 && place.builds == 4)
            // Another context's save, merged, drops it too.
            let other = ModelContext(container)
            let there = try other.existingObject(with: place.objectID, as: Place.self)
            there.longitude = -0.12
            context.mergeChanges(from: try #require(try other.save()))
            #expect(place.coreLocation == Coordinate(latitude: 48.85, longitude: -0.12) && place.builds == 5)
            #expect(place.changedValuesForCurrentEvent().keys.contains("coreLocation"))
        }
    }

    @Test func objectsInNoContextDropCachesAndTellObservers() throws {
        let place = Place()
        place.latitude = 1
        #expect(place.coreLocation.latitude == 1 && place.builds == 1)
        var seen: [Double] = []
        let token = try place.observe(\.latitude) { _, change in seen.append(change.newValue ?? -1) }
        place.latitude = 2
        #expect(place.coreLocation.latitude == 2 && place.builds == 2)
        #expect(seen == [2])
        _ = token
    }

    @Test func dependenciesThroughToOneAndToMany() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let team = Team()
            team.name = "Engines"
            context.insert(team)
            let a = person(context, "Ada", "Lovelace")
            let b = person(context, "Charles", "Babbage")
            a.team = team
            #expect(a.teamLabel == "Ada Lovelace (Engines)")
            #expect(team.roster == "Ada Lovelace" && team.rosterComputed == 1)
            b.team = team   // the to-many changed through its inverse
            #expect(team.roster == "Ada Lovelace, Charles Babbage" && team.rosterComputed == 2)
            _ = team.roster
            #expect(team.rosterComputed == 2)
            try context.save()
            context.processPendingChanges()
            b.firstName = "Chuck"   // a member's attribute: the team's cache goes
            #expect(team.changedValuesForCurrentEvent().keys.contains("roster"))
            let teamChanged = team.hasChanges
            #expect(!teamChanged)   // a computed property is no change to save
            #expect(team.roster == "Ada Lovelace, Chuck Babbage" && team.rosterComputed == 3)
            team.name = "Analytical"   // through the to-one, on the other side
            #expect(a.changedValuesForCurrentEvent().keys.contains("teamLabel"))
            #expect(a.teamLabel == "Ada Lovelace (Analytical)")
            b.team = nil
            let roster = team.roster
            #expect(roster == "Ada Lovelace")
            #expect(team.rosterComputed == 4)
        }
    }

    @Test func observersGetOldAndNewValues_onceForACoalescedChange() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let p = person(context)
            var seen: [String] = []
            let fullToken = try p.observe(\.fullName, options: [.prior]) { _, change in
                seen.append("\(change.kind) \(change.oldValue ?? "nil") -> \(change.newValue ?? "nil")")
            }
            var firstNames: [String] = []
            let firstToken = try p.observe(\.firstName, options: [.initial]) { _, change in
                firstNames.append(change.newValue ?? "nil")
            }
            p.firstName = "Augusta"
            #expect(seen == ["willChange Ada Lovelace -> nil", "didChange Ada Lovelace -> Augusta Lovelace"])
            seen = []
            p.fullName = "Grace Hopper"   // two dependencies, one change
            #expect(seen == ["willChange Augusta Lovelace -> nil", "didChange Augusta Lovelace -> Grace Hopper"])
            seen = []
            p.firstName = "Grace"   // the same value: no change
            #expect(seen.isEmpty)
            #expect(firstNames == ["Ada", "Augusta", "Grace"])
            fullToken.cancel()
            p.lastName = "Murray"
            #expect(seen.isEmpty)
            _ = firstToken
            #expect(throws: StrataError.self) { _ = try p.observe(\.initialsComputed) { _, _ in } }
        }
    }

    @Test func observersHearMergesAndDerivedValuesASaveMoved() throws {
        try withContainer(for: [Invoice.self, InvoiceItem.self]) { container in
            let context = ModelContext(container)
            let invoice = Invoice()
            invoice.number = "A-1"
            context.insert(invoice)
            try context.save()
            var totals: [Decimal] = []
            let token = try invoice.observe(\.total) { _, change in totals.append(change.newValue ?? -1) }
            let line = InvoiceItem(price: 10, quantity: 3)
            line.invoice = invoice
            try context.save()
            #expect(totals == [30])
            let other = ModelContext(container)
            let there = try other.existingObject(with: line.objectID, as: InvoiceItem.self)
            there.quantity = 5
            context.mergeChanges(from: try #require(try other.save()))
            #expect(totals == [30, 50])
            _ = token
        }
    }

    @Test func objectsDidChangeListsObjectsAndKeys() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            var told: [ObjectsDidChange] = []
            let token = context.observeObjectsDidChange { told.append($0) }
            let p = person(context)
            context.processPendingChanges()
            #expect(told.count == 1 && told[0].insertedObjects == [p])
            try context.save()
            _ = p.fullName
            p.lastName = "Byron"
            p.isSelected = true
            context.processPendingChanges()
            let last = try #require(told.last)
            #expect(last.updatedObjects == [p])
            let keys = try #require(last.changedKeys[p])
            #expect(keys.isSuperset(of: ["lastName", "isSelected", "fullName"]), "\(keys)")
            #expect(!keys.contains("firstName"))
            let count = told.count
            try context.delete(p)
            try context.save()
            #expect(told.count > count && told[count].deletedObjects == [p])
            // Another context's save, merged.
            let q = person(context, "Alan", "Turing")
            try context.save()
            let other = ModelContext(container)
            try other.existingObject(with: q.objectID, as: Person.self).lastName = "T."
            context.mergeChanges(from: try #require(try other.save()))
            #expect(told.last?.updatedObjects == [q] && told.last?.changedKeys[q]?.contains("lastName") == true)
            _ = token
        }
    }

    @Test func swiftObservationTracksStoredTransientComputedAndDerived() throws {
        try withContainer(for: [Invoice.self, InvoiceItem.self, Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let p = person(context)
            try context.save()
            final class Flag: @unchecked Sendable { var fired = 0 }
            func fires(_ read: () -> Void, after change: () throws -> Void) rethrows -> Bool {
                let flag = Flag()
                withObservationTracking { read() } onChange: { flag.fired += 1 }
                try change()
                return flag.fired == 1
            }
            #expect(fires({ _ = p.firstName }, after: { p.firstName = "B" }))
            #expect(fires({ _ = p.isSelected }, after: { p.isSelected = true }))
            #expect(fires({ _ = p.fullName }, after: { p.lastName = "C" }))
            #expect(fires({ _ = p.initials }, after: { p.firstName = "D" }))
            #expect(fires({ _ = p.initials }, after: { p.firstName = "E" }))   // a cache hit is tracked too
            #expect(!fires({ _ = p.firstName }, after: { p.lastName = "F" }))
            let invoice = Invoice()
            invoice.number = "X"
            context.insert(invoice)
            try context.save()
            #expect(try fires({ _ = invoice.total }, after: {
                let line = InvoiceItem(price: 2, quantity: 2)
                line.invoice = invoice
                try context.save()
            }))
            let other = ModelContext(container)
            #expect(try fires({ _ = p.lastName }, after: {
                try other.existingObject(with: p.objectID, as: Person.self).lastName = "Merged"
                context.mergeChanges(from: try #require(try other.save()))
            }))
        }
    }
}
