import Foundation
import Strata
import Testing

final class Article: ManagedObject {
    @Attribute var title: String
    @Attribute var body: String?
    @Derived("uppercase:(title)") var headline: String
    override class var fullTextIndexes: [[String]] { [["title", "body"], ["headline"]] }
}

/// `ModelContext.search`: word-index searches through model classes, saved and unsaved.
@Suite struct SearchTests {
    @Test func searchesFindSavedAndUnsavedObjectsBestFirst() throws {
        try withContainer(for: [Article.self]) { container in
            let context = ModelContext(container)
            for (title, body) in [("Café trees", "A café, a tree, a café again."), ("Storage engines", "Pages and logs"),
                                  ("Stored trees", nil)] {
                let article = Article()
                article.title = title
                article.body = body
                context.insert(article)
            }
            try context.save()
            let cafe = try context.search(Article.self, matching: "CAFE", in: [\Article.title, \Article.body])
            #expect(cafe.map(\.object.title) == ["Café trees"])
            let stor = try context.search(Article.self, matching: "stor*", in: [\.title, \.body])
            #expect(Set(stor.map(\.object.title)) == ["Storage engines", "Stored trees"])
            let any = try context.search(Article.self, matching: "café stored", in: [\.title, \.body], match: .anyWord)
            #expect(any.count == 2 && any[0].object.title == "Café trees" && any[0].score > any[1].score)

            // Unsaved: an insert is found, a deleted object and an edited-away word are not.
            let draft = Article()
            draft.title = "Another café"
            context.insert(draft)
            try context.delete(try #require(stor.first { $0.object.title == "Stored trees" }).object)
            cafe[0].object.body = nil
            let now = try context.search(Article.self, matching: "cafe", in: [\.title, \.body])
            #expect(Set(now.map(\.object.title)) == ["Café trees", "Another café"])
            #expect(try context.search(Article.self, matching: "stor*", in: [\.title, \.body]).map(\.object.title)
                    == ["Storage engines"])
            #expect(try context.search(Article.self, matching: "again", in: [\.title, \.body]).isEmpty)
            // The derived index, after the save settles it; limits.
            try context.save()
            #expect(try context.search(Article.self, matching: "ANOTHER", in: [\.headline]).map(\.object) == [draft])
            #expect(try context.search(Article.self, matching: "cafe", in: [\.title, \.body], limit: 1).count == 1)
            // One property of a two-property index: its entries count each property apart.
            #expect(Set(try context.search(Article.self, matching: "cafe", in: [\.title]).map(\.object.title))
                    == ["Café trees", "Another café"])
            // Bad searches are typed errors.
            for attempt: () throws -> Void in [
                { _ = try context.search(Article.self, matching: "cafe") },  // two indexes: which?
                { _ = try context.search(Article.self, matching: "...", in: [\.headline]) },
                { _ = try context.search(Article.self, matching: "cafe", in: [\.title, \.headline]) },  // no index over both
                { _ = try context.search(Article.self, matching: "cafe", in: [\.headline], limit: -1) },
            ] {
                #expect(throws: StrataError.self) { try attempt() }
            }
        }
    }

    /// Word comparisons in fetch predicates, alone or with other conditions, saved and unsaved,
    /// through the typed builder and a format string.
    @Test func fetchPredicatesMatchWordsThroughTheIndex() throws {
        try withContainer(for: [Article.self]) { container in
            let context = ModelContext(container)
            for (title, body) in [("Café trees", "A café, a tree."), ("Storage engines", "Pages and logs"),
                                  ("Stored trees", nil), ("Logs", "Café storage")] {
                let article = Article()
                article.title = title
                article.body = body
                context.insert(article)
            }
            try context.save()
            func titles(_ predicate: FetchPredicate) throws -> [String] {
                try context.fetch(FetchDescriptor<Article>(predicate: predicate, sortBy: [FetchSortDescriptor(\Article.title)]))
                    .map(\.title)
            }
            #expect(try titles(FetchPredicate.words(of: [\Article.title, \Article.body], matching: "CAFE"))
                    == ["Café trees", "Logs"])
            #expect(try titles(PropertyPath(\Article.title).containsWords("stor*")) == ["Storage engines", "Stored trees"])
            #expect(try titles(PropertyPath(\Article.body).containsAnyWord("logs tree")) == ["Café trees", "Storage engines"])
            #expect(try titles(FetchPredicate.words(of: [\Article.title, \Article.body], matching: "stor*")
                               && PropertyPath(\Article.title) != "Logs") == ["Storage engines", "Stored trees"])
            #expect(try titles(try FetchPredicate(format: "headline CONTAINSWORDS %@", "trees")) == ["Café trees", "Stored trees"])

            // Unsaved changes count, as in every fetch.
            let draft = Article()
            draft.title = "Another café"
            context.insert(draft)
            let stored = try #require(try context.fetch(FetchDescriptor<Article>(predicate: PropertyPath(\Article.title) == "Stored trees")).first)
            stored.title = "Kept"
            #expect(try titles(FetchPredicate.words(of: [\Article.title, \Article.body], matching: "café"))
                    == ["Another café", "Café trees", "Logs"])
            #expect(try titles(PropertyPath(\Article.title).containsWords("stor*")) == ["Storage engines"])
            #expect(try context.fetchCount(FetchDescriptor<Article>(predicate: PropertyPath(\Article.title).containsWords("kept"))) == 1)

            // What does not fit is a typed error.
            #expect(throws: StrataError.self) {
                _ = try context.fetch(FetchDescriptor<Article>(predicate: PropertyPath(\Article.title).containsWords(" .. ")))
            }
            #expect(throws: StrataError.self) {
                _ = try context.fetch(FetchDescriptor<Article>(predicate: PropertyPath(\Article.title).containsWords(5)))
            }
        }
    }
}
