import ArgumentParser
import Strata

/// Seed 000's cached `coreLocation`: built once from latitude and longitude, dropped when
/// either changes, and the drop visible in `changedValuesForCurrentEvent()` (comment 5).
struct Coordinate: Equatable, CustomStringConvertible {
    var latitude: Double
    var longitude: Double
    var description: String { "(\(latitude), \(longitude))" }
}

final class Place: ManagedObject {
    @Attribute var name: String
    @Attribute var latitude: Double
    @Attribute var longitude: Double
    /// How many times `coreLocation` was built: the cache's witness.
    var builds = 0

    var coreLocation: Coordinate {
        cached(dependsOn: \.latitude, \.longitude) {
            builds += 1
            return Coordinate(latitude: latitude, longitude: longitude)
        }
    }
}

struct Location: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "location",
        abstract: "Place.coreLocation: cached, rebuilt when latitude or longitude changes, "
            + "seen in changedValuesForCurrentEvent."
    )

    func run() throws {
        begin("location: a cached coreLocation invalidated by its dependencies (seed 000)")
        try withStorePath("places") { path in
            let container = try ModelContainer(for: [Place.self], path: path)
            defer { try? container.close() }
            let context = ModelContext(container)
            let paris = Place()
            paris.name = "Paris"
            paris.latitude = 48.85
            paris.longitude = 2.35
            context.insert(paris)
            try context.save()
            context.processPendingChanges()

            _ = paris.coreLocation
            try show("coreLocation", paris.coreLocation, expected: Coordinate(latitude: 48.85, longitude: 2.35))
            try show("built", paris.builds, expected: 1)
            var told = 0
            let token = try paris.observe(\.coreLocation) { _, _ in told += 1 }
            paris.latitude = 48.86
            say("set latitude: the cache is dropped, observers told, the current event names it")
            try show("observers told", told, expected: 1)
            try show("changedValuesForCurrentEvent", paris.changedValuesForCurrentEvent().keys.sorted(),
                     expected: ["coreLocation", "latitude"])
            try show("coreLocation", paris.coreLocation, expected: Coordinate(latitude: 48.86, longitude: 2.35))
            try show("built", paris.builds, expected: 2)
            paris.name = "Paris, France"
            say("set name (not a dependency): the cached value stays")
            _ = paris.coreLocation
            try show("built", paris.builds, expected: 2)
            context.rollback()
            say("rollback: latitude goes back, and the cache with it")
            try show("coreLocation", paris.coreLocation, expected: Coordinate(latitude: 48.85, longitude: 2.35))
            try show("built", paris.builds, expected: 3)
            token.cancel()
        }
    }
}
