import Foundation
import Strata
import Testing

/// Filtering and sorting by computed and transient properties, in memory and explicitly.
@Suite struct InMemoryFetchTests {
    private func people(_ context: ModelContext) -> [Person] {
        let names = [("Grace", "Hopper"), ("Ada", "Lovelace"), ("Ada", "King"), ("Alan", "Turing"), ("Barbara", "Liskov")]
        return names.map { first, last in
            let p = Person()
            p.firstName = first
            p.lastName = last
            context.insert(p)
            return p
        }
    }

    @Test func sortsAndFiltersByComputedAndTransientKeys() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let all = people(context)
            try context.save()
            all[1].isSelected = true
            all[3].isSelected = true
            all[4].isSelected = true

            var d = FetchDescriptor<Person>()
            d.inMemorySortBy = [InMemorySortDescriptor(\.fullName)]
            #expect(try context.fetch(d).map(\.fullName) == ["Ada King", "Ada Lovelace", "Alan Turing", "Barbara Liskov", "Grace Hopper"])

            // A transient filter, a descending computed order, the store's predicate first,
            // and offset and limit after the in-memory stages.
            d.predicate = try FetchPredicate(format: "firstName != 'Grace'")
            d.inMemoryFilter = { $0.isSelected }
            d.inMemorySortBy = [InMemorySortDescriptor(\.initials, ascending: false)]
            #expect(try context.fetch(d).map(\.initials) == ["BL", "AT", "AL"])
            d.fetchOffset = 1
            d.fetchLimit = 1
            #expect(try context.fetch(d).map(\.initials) == ["AT"])
            #expect(try context.fetchCount(d) == 1)
            #expect(try context.fetchIdentifiers(d) == [all[3].objectID])
            d.fetchOffset = 10
            #expect(try context.fetch(d).isEmpty)

            // Ties keep the store's order; an optional key puts nil first; a custom comparison.
            var byFirst = FetchDescriptor<Person>(sortBy: [FetchSortDescriptor("lastName")])
            byFirst.inMemorySortBy = [InMemorySortDescriptor(\.firstName)]
            #expect(try context.fetch(byFirst).map(\.lastName) == ["King", "Lovelace", "Turing", "Liskov", "Hopper"])
            all[0].note = "b"
            all[2].note = "a"
            byFirst.inMemorySortBy = [InMemorySortDescriptor(\.note)]
            #expect(try context.fetch(byFirst).map(\.note) == [nil, nil, nil, "a", "b"])
            byFirst.inMemorySortBy = [InMemorySortDescriptor(\.lastName, by: { $0.count < $1.count })]
            #expect(try context.fetch(byFirst).map(\.lastName) == ["King", "Hopper", "Liskov", "Turing", "Lovelace"])
        }
    }

    @Test func unsavedChangesCount() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let all = people(context)
            var d = FetchDescriptor<Person>()
            d.inMemorySortBy = [InMemorySortDescriptor(\.fullName)]
            #expect(try context.fetch(d).count == 5)     // inserted, not saved
            try context.save()
            all[0].firstName = "Aaron"
            #expect(try context.fetch(d).first === all[0])
            try context.delete(all[1])
            #expect(try context.fetch(d).count == 4)
        }
    }

    @Test func storeFetchesNamingComputedOrTransientKeysSayToUseMemory() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let all = people(context)
            _ = all[0].fullName       // computed properties are known once read
            try context.save()
            for (predicate, sort) in [("isSelected == YES", nil), (nil, "fullName"), ("fullName == 'Ada King'", nil),
                                      ("team.members.note == 'x'", nil), (nil, "mode"),
                                      // Unknown to the store (a computed property not read yet, any other Swift property)
                                      (nil, "initials"), ("team.motto == 'x'", nil)] as [(String?, String?)] {
                let d = FetchDescriptor<Person>(predicate: try predicate.map { try FetchPredicate(format: $0) },
                                                sortBy: sort.map { [FetchSortDescriptor($0)] } ?? [])
                #expect {
                    try context.fetch(d)
                } throws: { error in
                    guard case .invalidFetch(let message) = error as? StrataError else { return false }
                    return message.contains("in memory") || message.contains("inMemory")
                }
            }
            var negative = FetchDescriptor<Person>()
            negative.inMemoryFilter = { _ in true }
            negative.fetchLimit = -1
            #expect(throws: StrataError.self) { try context.fetch(negative) }
        }
    }
}
