import ArgumentParser
import Strata

/// Seed 000: a person's `fullName`, composed from first and last name, settable (it splits
/// back), observable; and a transient attribute, tracked but never stored.
final class Person: ManagedObject {
    @Attribute var firstName: String
    @Attribute var lastName: String
    @Transient var nickname: String?
}

extension Person {
    /// Declared in an extension, as seed 000's category was: here that is all it takes.
    var fullName: String {
        get { computed(dependsOn: \.firstName, \.lastName) { "\(firstName) \(lastName)" } }
        set {
            coalescingChanges {
                let parts = newValue.split(separator: " ", maxSplits: 1).map(String.init)
                firstName = parts.first ?? ""
                lastName = parts.count > 1 ? parts[1] : ""
            }
        }
    }
}

struct FullName: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fullname",
        abstract: "Person.fullName: computed from first and last name, settable, observed; a transient nickname."
    )

    func run() throws {
        begin("fullname: a computed, settable, observable fullName and a transient (seed 000)")
        try withStorePath("people") { path in
            let container = try ModelContainer(for: [Person.self], path: path)
            defer { try? container.close() }
            let context = ModelContext(container)
            let ada = Person()
            ada.fullName = "Ada Lovelace"
            context.insert(ada)
            say("set fullName = \"Ada Lovelace\"; it splits into the stored names")
            try show("firstName", ada.firstName, expected: "Ada")
            try show("lastName", ada.lastName, expected: "Lovelace")
            try context.save()

            var told: [String] = []
            let token = try ada.observe(\.fullName) { _, change in
                told.append("\(change.oldValue ?? "") -> \(change.newValue ?? "")")
            }
            ada.lastName = "King"
            say("set lastName = \"King\": observers of fullName are told")
            try show("fullName observer", told, expected: ["Ada Lovelace -> Ada King"])
            ada.fullName = "Grace Hopper"
            say("set fullName = \"Grace Hopper\": two stored changes, one notification")
            try show("fullName observer", told.last ?? "", expected: "Ada King -> Grace Hopper")
            try show("notifications", told.count, expected: 2)
            try show("changed keys", ada.changedValues().keys.sorted(), expected: ["firstName", "lastName"])
            token.cancel()
            try context.save()

            ada.nickname = "Amazing Grace"
            say("set the transient nickname: a change, not a persistent one")
            try show("hasChanges", ada.hasChanges, expected: true)
            try show("hasPersistentChangedValues", ada.hasPersistentChangedValues, expected: false)
            let fetch = FetchDescriptor<Person>(predicate: try FetchPredicate(format: "nickname != nil"))
            do {
                _ = try context.fetch(fetch)
                throw ExampleFailure(description: "a store predicate on a transient was accepted")
            } catch StrataError.invalidFetch(let message) {
                say("a store predicate on it is refused: \(message)")
            }
            var inMemory = FetchDescriptor<Person>()
            inMemory.inMemoryFilter = { $0.nickname != nil }
            try show("in-memory filter on it", try context.fetch(inMemory).map(\.fullName), expected: ["Grace Hopper"])
            context.refresh(ada, mergeChanges: false)
            say("refresh(mergeChanges: false) puts the transient back to its default")
            try show("nickname", ada.nickname ?? "nil", expected: "nil")
            try show("fullName", ada.fullName, expected: "Grace Hopper")
        }
    }
}
