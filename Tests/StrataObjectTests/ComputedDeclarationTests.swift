import Foundation
import Strata
import Testing

// Classes used by these tests only, so no other test reads their computed properties first:
// what is checked is what the schema knows before any read in the process.

/// Seed 000's `fullName`, declared in an extension and listed in `computedProperties`.
final class Badge: ManagedObject {
    @Attribute var first: String
    @Attribute var last: String
    @Relationship var holder: BadgeHolder?
    override class var computedProperties: [AnyKeyPath] { [\Badge.caption, \Badge.holderName] }
}

extension Badge {
    var caption: String { computed(dependsOn: \.first, \.last) { "\(first) \(last)" } }
    var holderName: String { cached(dependsOn: \.holder?.name) { holder?.name ?? "-" } }
}

final class BadgeHolder: ManagedObject {
    @Attribute var name: String
    @Relationship(inverse: \Badge.holder) var badges: Set<Badge>
}

/// Lists a stored property as computed.
final class MislistedStored: ManagedObject {
    @Attribute var name: String
    override class var computedProperties: [AnyKeyPath] { [\MislistedStored.name] }
}

/// Lists a plain Swift property as computed.
final class MislistedPlain: ManagedObject {
    @Attribute var name: String
    var shout: String { name.uppercased() }
    override class var computedProperties: [AnyKeyPath] { [\MislistedPlain.shout] }
}

/// Lists a computed property whose dependency goes on past an attribute.
final class BadDependency: ManagedObject {
    @Attribute var name: String
    var label: String { computed(dependsOn: "name.count") { name } }
    override class var computedProperties: [AnyKeyPath] { [\BadDependency.label] }
}

/// Lists a key path of another class.
final class ForeignListing: ManagedObject {
    @Attribute var name: String
    override class var computedProperties: [AnyKeyPath] { [\Badge.caption] }
}

/// A computed property listed in `computedProperties` is known, with its dependencies, from the
/// moment its container opens, not from its first read (decision 44).
@Suite(.serialized) struct ComputedDeclarationTests {
    @Test func aListedComputedPropertyIsAChangeBeforeItWasEverRead() throws {
        try withContainer(for: [Badge.self, BadgeHolder.self]) { container in
            let context = ModelContext(container)
            let holder = BadgeHolder()
            holder.name = "Ada"
            let b = Badge()
            b.first = "Ada"
            b.last = "King"
            b.holder = holder
            context.insert(b)
            try context.save()
            var keys: [Set<String>] = []
            let token = context.observeObjectsDidChange { keys.append($0.changedKeys[b] ?? []) }
            defer { token.cancel() }
            b.first = "Augusta"
            #expect(b.changedValuesForCurrentEvent().keys.sorted() == ["caption", "first"])
            context.processPendingChanges()
            #expect(keys == [["first", "caption"]])
            // Through a to-one: the holder's name names the badge's cached holderName.
            holder.name = "Lovelace"
            #expect(b.changedValuesForCurrentEvent().keys.sorted() == ["holderName"])
            #expect(b.holderName == "Lovelace" && b.caption == "Augusta King")
        }
    }

    @Test func aStoreFetchByAListedComputedPropertySaysItIsComputed() throws {
        try withContainer(for: [Badge.self, BadgeHolder.self]) { container in
            let context = ModelContext(container)
            for (predicate, sort) in [(nil, "caption"), ("caption == 'x'", nil), ("holderName BEGINSWITH 'A'", nil)] as [(String?, String?)] {
                let d = FetchDescriptor<Badge>(predicate: try predicate.map { try FetchPredicate(format: $0) },
                                               sortBy: sort.map { [FetchSortDescriptor($0)] } ?? [])
                #expect {
                    try context.fetch(d)
                } throws: { error in
                    guard case .invalidFetch(let message) = error as? StrataError else { return false }
                    return message.contains("is a computed property")
                }
            }
        }
    }

    @Test(arguments: [("MislistedStored", "not a computed property"), ("MislistedPlain", "not a computed property"),
                      ("BadDependency", "is not a relationship"), ("ForeignListing", "not a computed property")])
    func aWrongListingIsRefusedWhenTheContainerOpens(entity: String, reason: String) throws {
        let classes: [String: ManagedObject.Type] = ["MislistedStored": MislistedStored.self, "MislistedPlain": MislistedPlain.self,
                                                     "BadDependency": BadDependency.self, "ForeignListing": ForeignListing.self]
        let type = try #require(classes[entity])
        _ = try withStorePath { path in
            #expect {
                _ = try ModelContainer(for: [type], path: path)
            } throws: { error in
                guard case .invalidModel(let e, _, let why) = error as? StrataError else { return false }
                return e == entity && why.contains(reason)
            }
        }
    }
}
