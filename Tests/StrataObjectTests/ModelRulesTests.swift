import Foundation
import Strata
import Testing

/// Many-to-many with inverses, uniqueness, delete rules and validation through model classes.
final class Writer: ManagedObject {
    @Attribute(.unique, validation: [.minimumLength(2)]) var handle: String
    @Attribute(default: 0, validation: [.minimum(0), .maximum(150)]) var age: Int16
    @Relationship(deleteRule: .deny, inverse: \Volume.author) var books: Set<Volume>
}

final class Volume: ManagedObject {
    @Attribute var title: String
    @Relationship var author: Writer?
    @Relationship(inverse: \Bookcase.books) var shelves: Set<Bookcase>
}

final class Bookcase: ManagedObject {
    @Attribute var label: String
    @Relationship var books: Set<Volume>
    @Derived("books.@count") var bookCount: Int64
}

@Suite struct ModelRulesTests {
    static let classes: [ManagedObject.Type] = [Writer.self, Volume.self, Bookcase.self]

    @Test func manyToManyKeepsBothSidesAndCounts() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            let a = Bookcase(), b = Bookcase()
            a.label = "a"; b.label = "b"
            let x = Volume(), y = Volume()
            x.title = "x"; y.title = "y"
            a.books = [x, y]                       // in no context yet: both sides follow
            #expect(x.shelves == [a] && y.shelves == [a])
            context.insert(a)
            #expect(x.context === context && y.context === context)
            y.shelves.insert(b)                    // from the other side
            #expect(b.context === context && b.books == [y])
            try context.save()
            #expect(a.bookCount == 2 && b.bookCount == 1)
            let other = ModelContext(container)
            let seenY = try other.existingObject(with: y.objectID, as: Volume.self)
            #expect(Set(seenY.shelves.map(\.label)) == ["a", "b"])
            a.books.remove(y)
            #expect(y.shelves == [b])
            try context.save()
            #expect(a.bookCount == 1)
            other.refresh(seenY, mergeChanges: false)
            #expect(seenY.shelves.map(\.label) == ["b"])
            try context.delete(b)                  // nullify: y leaves b
            try context.save()
            #expect(y.shelves.isEmpty)
        }
    }

    @Test func uniquenessDenyAndValidationFailTheSaveAndLeaveTheContextAsItWas() throws {
        try withContainer(for: Self.classes) { container in
            let context = ModelContext(container)
            let ada = Writer()
            ada.handle = "ada"
            let book = Volume()
            book.title = "Notes"
            book.author = ada
            context.insert(ada)
            try context.save()

            let twin = Writer()
            twin.handle = "ada"                    // unique: conflict
            context.insert(twin)
            #expect(throws: StrataError.self) { try context.save() }
            #expect(twin.isInserted && context.hasChanges)
            try context.delete(twin)

            try context.delete(ada)                // deny: she has a book
            do {
                try context.save()
                Issue.record("deny did not stop the delete")
            } catch StrataError.conflict(let entity, let properties, _) {
                #expect(entity == "Writer" && properties == ["books"])
            }
            #expect(ada.isDeleted)                 // still pending, nothing written
            context.rollback()
            #expect(!ada.isDeleted && ada.books == [book])

            // Every failure of one save in one error: the model's rules and a custom one.
            let short = Writer(), old = Writer()
            short.handle = "x"                     // minimumLength 2
            old.handle = "old"
            old.age = 200                          // maximum 150
            context.insert(short)
            context.insert(old)
            do {
                try context.save()
                Issue.record("invalid objects were saved")
            } catch let error as StrataError {
                let text = "\(error)"
                #expect(text.contains("handle") || text.contains("age"), "\(text)")
            }
            #expect(short.isInserted && old.isInserted && old.age == 200)
            short.handle = "xy"
            old.age = 99
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<Writer>()) == 3)
        }
    }
}

/// A to-one set to an object the same save deletes is nullified by the store; the object in the
/// context must show that too (it kept the deleted target, and its next save failed with
/// "no UndoFolder with primary key 1": the row's net change was nothing, so no change list
/// named it). Saved and inserted objects, each with and without a later change.
@Suite struct NullifiedInTheSameSaveTests {
    @Test(arguments: [false, true], [false, true])
    func aToOneToAnObjectTheSaveDeletesReadsNil(inserted: Bool, changeAfter: Bool) throws {
        try withContainer(for: UndoModelTests.classes) { container in
            let context = ModelContext(container)
            let folder = UndoFolder()
            folder.uid = 1
            folder.name = "f"
            context.insert(folder)
            let note = UndoNote()
            note.uid = 2
            note.text = "n"
            if !inserted { context.insert(note) }
            try context.save()
            if inserted { context.insert(note) }
            note.folder = folder
            try context.delete(folder)
            try context.save()
            #expect(note.folder == nil)
            #expect(!note.hasChanges && note.changedValues().isEmpty)
            if changeAfter {
                note.rank = 3
                try context.save()
            }
            let other = ModelContext(container)
            let seen = try other.existingObject(with: note.objectID, as: UndoNote.self)
            #expect(seen.folder == nil && seen.rank == (changeAfter ? 3 : 0))
        }
    }
}
