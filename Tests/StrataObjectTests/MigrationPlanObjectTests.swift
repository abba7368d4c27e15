import Foundation
import Strata
import Testing

/// The first version of the contacts model: a phone number as free text.
enum ContactsV1 {
    final class Contact: ManagedObject {
        @Attribute var name: String
        @Attribute var phone: String
    }
}

/// The current version: the phone split into a country code and a number (custom stage), and
/// the contacts grouped by their first letter in an entity of its own.
final class Contact: ManagedObject {
    @Attribute var name: String
    @Attribute var countryCode: Int64
    @Attribute var number: String
    @Relationship(inverse: \Initial.contacts) var initial: Initial?
}

final class Initial: ManagedObject {
    @Attribute var letter: String
    @Relationship var contacts: [Contact]
    @Derived("contacts.@count") var contactCount: Int64
}

/// Migration plans through model classes: older versions kept as classes in a namespace.
@Suite struct MigrationPlanObjectTests {
    static func plan() throws -> MigrationPlan {
        try MigrationPlan(stages: [
            .custom(from: try Model(for: [ContactsV1.Contact.self], version: 1),
                    to: try Model(for: [Contact.self, Initial.self], version: 2)) { old, new in
                var initials: [String: ObjectID] = [:]
                for id in try old.objects("Contact") {
                    guard case .string(let name) = try old.value("name", of: id),
                          case .string(let phone) = try old.value("phone", of: id) else { continue }
                    // "+46 70 123" → 46, "70 123"; no prefix → 0, the whole text.
                    let parts = phone.split(separator: " ", maxSplits: 1).map(String.init)
                    let code = parts.count == 2 && parts[0].hasPrefix("+") ? Int64(parts[0].dropFirst()) : nil
                    try new.update(id, ["countryCode": code ?? 0, "number": code == nil ? phone : parts[1]])
                    let letter = String(name.prefix(1)).uppercased()
                    let initial = try initials[letter] ?? new.insert("Initial", ["letter": letter])
                    initials[letter] = initial
                    try new.set("initial", of: id, to: initial)
                }
            },
        ])
    }

    @Test func aContainerMigratesAStoreWrittenByOlderClasses() throws {
        try withStorePath { path in
            let v1 = try ModelContainer(for: [ContactsV1.Contact.self], path: path)
            let context = ModelContext(v1)
            for (name, phone) in [("ann", "+46 70 123"), ("Al", "555 0100"), ("bo", "+1 202")] {
                let contact = ContactsV1.Contact()
                contact.name = name
                contact.phone = phone
                context.insert(contact)
            }
            try context.save()
            try v1.close()

            // Without the plan, the current classes are refused; with it, the store migrates.
            #expect(throws: StrataError.self) { _ = try ModelContainer(for: [Contact.self, Initial.self], path: path) }
            let container = try ModelContainer(for: [Contact.self, Initial.self], path: path, migration: .plan(try Self.plan()))
            let current = ModelContext(container)
            let contacts = try current.fetch(FetchDescriptor<Contact>(sortBy: [FetchSortDescriptor(\Contact.name)]))
            #expect(contacts.map(\.name) == ["Al", "ann", "bo"])
            #expect(contacts.map(\.countryCode) == [0, 46, 1])
            #expect(contacts.map(\.number) == ["555 0100", "70 123", "202"])
            #expect(contacts.map { $0.initial?.letter } == ["A", "A", "B"])
            let initials = try current.fetch(FetchDescriptor<Initial>(sortBy: [FetchSortDescriptor(\Initial.letter)]))
            #expect(initials.map(\.contactCount) == [2, 1])
            try container.close()

            // The older classes cannot open what the newer program migrated.
            do {
                _ = try ModelContainer(for: [ContactsV1.Contact.self], path: path)
                Issue.record("version 1 opened a version-2 store")
            } catch StrataError.unsupportedModelVersion(let found, let supported) {
                #expect(found == 2 && supported == 1)
            }
        }
    }
}
