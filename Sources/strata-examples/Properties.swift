// Every kind of property a model class has besides stored, relationship and derived ones —
// `Codable`, transient, computed, cached — observed three ways. The DocC article "Properties
// and observation" shows these lines from `import Foundation` on, and those of `run()`'s store.

import ArgumentParser
import Foundation
import Observation
import Strata

final class Contact: ManagedObject {
    @Attribute var firstName: String
    @Attribute var lastName: String
    @Attribute(default: 0) var latitude: Double
    @Attribute(default: 0) var longitude: Double
    @Transient var isSelected: Bool                 // never stored; a change, not a persistent one
    @CodableAttribute var languages: [String: Int] = [:]   // any Codable value, stored as JSON
    // Known with their dependencies from the container's open (else from their first read).
    override class var computedProperties: [AnyKeyPath] { [\Contact.fullName, \Contact.position] }
}

extension Contact {                                 // an extension works (seed 000's category problem)
    var fullName: String {
        get { computed(dependsOn: \.firstName, \.lastName) { "\(firstName) \(lastName)" } }
        set {
            coalescingChanges {                     // one notification for both names
                let parts = newValue.split(separator: " ", maxSplits: 1).map(String.init)
                firstName = parts.first ?? ""
                lastName = parts.count > 1 ? parts[1] : ""
            }
        }
    }
    var position: String {                          // computed once, until a dependency changes
        cached(dependsOn: \.latitude, \.longitude) { String(format: "%.2f,%.2f", latitude, longitude) }
    }
}

struct Properties: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "properties",
        abstract: "Contact: Codable, transient, computed and cached properties, observed three ways."
    )

    func run() throws {
        begin("properties: Codable, transient, computed and cached properties, observed three ways")
        try withStorePath("contacts") { path in
            let contacts = try ModelContainer(for: [Contact.self], path: path)
            let context = ModelContext(contacts)
            let ada = Contact()
            ada.fullName = "Ada Lovelace"
            ada.languages = ["English": 1, "French": 2]
            context.insert(ada)
            try context.save()

            let token = try ada.observe(\.fullName) { _, change in
                print("fullName: \(change.oldValue ?? "") -> \(change.newValue ?? "")")   // Ada Lovelace -> Ada King
            }
            ada.lastName = "King"
            withObservationTracking { _ = ada.position } onChange: { print("position changed") }
            _ = ada.position
            ada.latitude = 51.5                                 // prints "position changed"
            print(ada.changedValuesForCurrentEvent().keys.sorted())   // ["fullName", "lastName", "latitude", "position"]
            ada.isSelected = true
            print(ada.hasPersistentChangedValues, ada.changedValues()["isSelected"] as? Bool ?? false)  // true true
            token.cancel()
            try context.save()
            try contacts.close()

            say("reopened: the stored and Codable values are back, the transient one is not")
            let reopened = try ModelContainer(for: [Contact.self], path: path)
            defer { try? reopened.close() }
            let saved = try ModelContext(reopened).fetch(FetchDescriptor<Contact>())
            try show("contacts", saved.count, expected: 1)
            try show("fullName", saved[0].fullName, expected: "Ada King")
            try show("position", saved[0].position, expected: "51.50,0.00")
            try show("languages", saved[0].languages.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" },
                     expected: ["English 1", "French 2"])
            try show("isSelected", saved[0].isSelected, expected: false)
        }
    }
}
