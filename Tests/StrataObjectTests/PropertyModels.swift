import Foundation
import Strata

// Models of the property and observation tests: the seeds' scenarios.

/// Seed 000: a person with a transient, a settable computed `fullName` (declared in an
/// extension, as a category would) and a cached `initials`.
final class Person: ManagedObject {
    @Attribute var firstName: String
    @Attribute var lastName: String
    @Attribute var dateOfBirth: Date?
    @Transient var isSelected: Bool
    @Transient(default: "draft") var mode: String
    @Transient var note: String?
    @Relationship(inverse: \Team.members) var team: Team?

    /// Set by awakeFromFetch with a primitive setter (a baseline, not a change).
    static let awakeMode = "fetched"
    var initialsComputed = 0

    override func awakeFromFetch() { try? setPrimitiveValue(Person.awakeMode, forKey: "mode") }
}

extension Person {
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

    var initials: String {
        cached(dependsOn: \.firstName, \.lastName) {
            initialsComputed += 1
            return "\(firstName.prefix(1))\(lastName.prefix(1))"
        }
    }

    /// Through a to-one.
    var teamLabel: String { computed(dependsOn: \.team?.name, \.fullName) { "\(fullName) (\(team?.name ?? "-"))" } }
}

final class Team: ManagedObject {
    @Attribute var name: String
    @Relationship var members: Set<Person>
    var rosterComputed = 0
}

extension Team {
    /// Cached through a to-many: dropped when a member's name changes or members come and go.
    var roster: String {
        cached(dependsOn: "members.firstName", "members.lastName") {
            rosterComputed += 1
            return members.map(\.fullName).sorted().joined(separator: ", ")
        }
    }
}

/// Seed 000's cached `coreLocation`, rebuilt from latitude and longitude.
struct Coordinate: Equatable {
    var latitude: Double
    var longitude: Double
}

final class Place: ManagedObject {
    @Attribute var latitude: Double
    @Attribute var longitude: Double
    var builds = 0

    var coreLocation: Coordinate {
        cached(dependsOn: \.latitude, \.longitude) {
            builds += 1
            return Coordinate(latitude: latitude, longitude: longitude)
        }
    }
}
