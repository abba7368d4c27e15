import Foundation
import Strata
import StrataRecords
import Testing

/// A value type with nested structure, an enum and a dictionary.
struct CardStyle: Codable, Equatable {
    enum Shape: String, Codable { case round, square }
    var shape: Shape = .round
    var colors: [String: Int] = [:]
    var border: Double = 1
}

/// An enum with associated values (synthesised Codable).
enum CardLink: Codable, Equatable {
    case none
    case url(String)
    case card(id: Int64, pinned: Bool)
}

final class Card: ManagedObject {
    @Attribute var title: String
    @CodableAttribute var tags: [String] = []
    @CodableAttribute var style = CardStyle()
    @CodableAttribute var link: CardLink?
    @CodableAttribute var counts: [String: [Int]] = [:]
}

/// `@CodableAttribute`: Codable values stored as JSON in binary attributes (decision 67).
@Suite struct CodableAttributeTests {
    static let classes: [ManagedObject.Type] = [Card.self]

    @Test func valuesRoundTripThroughTheStore() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            let card = Card()
            card.title = "a"
            #expect(card.tags.isEmpty && card.style == CardStyle() && card.link == nil)   // defaults before insertion
            card.tags = ["x", "y"]
            card.style = CardStyle(shape: .square, colors: ["b": 2, "a": 1], border: 0.5)
            card.link = .card(id: 7, pinned: true)
            card.counts = ["k": [1, 2, 3]]
            context.insert(card)
            try context.save()
            let other = ModelContext(container)
            let seen = try #require(try other.fetch(FetchDescriptor<Card>()).first)
            #expect(seen.tags == ["x", "y"])
            #expect(seen.style == CardStyle(shape: .square, colors: ["a": 1, "b": 2], border: 0.5))
            #expect(seen.link == .card(id: 7, pinned: true))
            #expect(seen.counts == ["k": [1, 2, 3]])
            #expect(try seen.value(forKey: "tags") as? [String] == ["x", "y"])
            seen.link = nil
            try other.save()
            #expect(try ModelContext(container).fetch(FetchDescriptor<Card>()).first?.link == nil)
        }
    }

    @Test func changeTrackingComparesValues() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            let card = Card()
            card.title = "a"
            card.style = CardStyle(colors: ["a": 1, "b": 2])
            context.insert(card)
            try context.save()
            card.style = CardStyle(colors: ["b": 2, "a": 1])   // equal: the same sorted JSON
            card.tags = []
            #expect(!card.hasChanges && card.changedValues().isEmpty)
            card.tags = ["new"]
            #expect(card.changedValues().keys.sorted() == ["tags"])
            #expect(card.changedValues()["tags"] as? [String] == ["new"])
        }
    }

    @Test func predicatesCompareWholeValuesAndNil() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            for (title, tags, link) in [("a", ["x"], CardLink.url("u")), ("b", ["x", "y"], nil), ("c", [], CardLink.none)]
                as [(String, [String], CardLink?)] {
                let card = Card()
                card.title = title
                card.tags = tags
                card.link = link
                context.insert(card)
            }
            try context.save()
            let reader = ModelContext(container)
            func titles(_ predicate: FetchPredicate) throws -> [String] {
                try reader.fetch(FetchDescriptor<Card>(predicate: predicate, sortBy: [FetchSortDescriptor(\Card.title)]))
                    .map(\.title)
            }
            #expect(try titles(PropertyPath(\Card.tags) == (try StoredValue(encoding: ["x", "y"]))) == ["b"])
            #expect(try titles(PropertyPath(\Card.link) == nil) == ["b"])
            #expect(try titles(PropertyPath(\Card.link) != nil) == ["a", "c"])
            #expect(try titles(PropertyPath(\Card.link) == (try StoredValue(encoding: CardLink.none))) == ["c"])
        }
    }

    /// JSON another version of the type wrote: the read gives the default, the key-based read
    /// throws why, and nothing traps.
    @Test func aValueThatDoesNotDecodeReadsAsTheDefaultAndTheKeyedReadThrows() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            let written = Card()
            written.title = "a"
            context.insert(written)
            try context.save()
            // Another program (or version of the type) writes JSON of another shape.
            _ = try container.store.write { tx in
                let id = try #require(try tx.objects("Card").first)
                try tx.update(id, ["style": StoredValue.binary(Array(#"{"shape":"hexagon"}"#.utf8)),
                                   "tags": StoredValue.binary(Array("[1,2".utf8))])
            }
            let card = try #require(try ModelContext(container).fetch(FetchDescriptor<Card>()).first)
            #expect(card.style == CardStyle() && card.tags.isEmpty)
            for key in ["style", "tags"] {
                #expect {
                    _ = try card.value(forKey: key)
                } throws: { error in
                    guard case .invalidObject(entity: "Card", _, property: key, let reason)? = error as? StrataError else { return false }
                    return reason.contains("decode")
                }
            }
            card.title = "b"                                   // the rest of the object still saves
            try card.context?.save()
        }
    }

    @Test func aValueThatCannotBeEncodedMakesTheSaveThrow() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            let card = Card()
            card.title = "a"
            context.insert(card)
            card.style = CardStyle(border: .nan)               // JSON has no NaN
            #expect(card.style == CardStyle())
            #expect {
                try context.save()
            } throws: { error in
                guard case .validation(entity: "Card", property: "style", _)? = error as? StrataError else { return false }
                return true
            }
            try context.save()                                 // the misuse was told once
        }
    }

    /// The same on an object in no context yet: set in `init` or before `insert`, the value that
    /// cannot be encoded is kept by the object until it joins a context, whose next save throws
    /// `validation` and stores nothing (it used to save the default in silence).
    @Test func aValueThatCannotBeEncodedBeforeInsertMakesTheSaveThrow() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            let card = Card()
            card.title = "nan"
            card.tags = ["kept"]
            card.style = CardStyle(border: .nan)
            card.counts = ["x": [1]]
            #expect(card.style == CardStyle())                   // nothing changed
            context.insert(card)
            #expect(context.hasChanges)
            #expect {
                try context.save()
            } throws: { error in
                guard case .validation(entity: "Card", property: "style", _)? = error as? StrataError else { return false }
                return true
            }
            let reader = ModelContext(container)
            #expect(try reader.fetchCount(FetchDescriptor<Card>()) == 0, "the failed save stored the row")
            card.style = CardStyle(border: 2)                     // a value that encodes: the save goes on
            try context.save()
            let stored = try #require(try reader.fetch(FetchDescriptor<Card>()).first)
            #expect(stored.style == CardStyle(border: 2) && stored.tags == ["kept"] && stored.counts == ["x": [1]])
        }
    }

    @Test func theRecordLayerEncodesAndDecodesWithTypedErrors() throws {
        let stored = try StoredValue(encoding: CardStyle(colors: ["z": 1, "a": 2]))
        guard case .binary(let bytes) = stored else { Issue.record("not binary: \(stored)"); return }
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"border":1,"colors":{"a":2,"z":1},"shape":"round"}"#)
        #expect(try stored.decoded(as: CardStyle.self) == CardStyle(colors: ["z": 1, "a": 2]))
        #expect(try StoredValue(encoding: Optional<CardStyle>.none) == .null)
        #expect(try StoredValue.null.decoded(as: CardStyle?.self) == nil)
        for bad: StoredValue in [.binary(Array("{".utf8)), .binary([0xFF, 0xFE]), .int(3), .null, .binary(Array("[]".utf8))] {
            #expect(throws: StrataError.self) { _ = try bad.decoded(as: CardStyle.self) }
        }
        #expect(throws: StrataError.self) { _ = try StoredValue(encoding: Double.infinity) }
    }

    @Test func undoRestoresCodableValues() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            context.undoStack = UndoStack()
            let card = Card()
            card.title = "a"
            context.insert(card)
            try context.save()
            card.tags = ["x"]
            context.undo()
            #expect(card.tags.isEmpty)
            context.redo()
            #expect(card.tags == ["x"])
        }
    }
}
