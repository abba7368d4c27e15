import ArgumentParser
import Foundation
import Strata

/// Seed 001: a blog post's `title`, not in the model, made from its author's name and its
/// date; observable when either changes (what `keyPathsForValuesAffectingTitle` declared),
/// and — what seed 001's readers asked and Core Data cannot do — a sort key, in memory.
final class Author: ManagedObject {
    @Attribute var name: String
    @Relationship(inverse: \BlogPost.author) var posts: Set<BlogPost>
}

final class BlogPost: ManagedObject {
    @Attribute var postDate: Date
    @Relationship var author: Author?
}

extension BlogPost {
    var title: String {
        computed(dependsOn: \.author?.name, \.postDate) {
            "\(author?.name ?? "Anonymous") — \(BlogPost.day.string(from: postDate))"
        }
    }

    nonisolated(unsafe) static let day: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }()
}

struct BlogPosts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blogpost",
        abstract: "BlogPost.title: computed from author.name and postDate, observed, "
            + "and a sort key in memory."
    )

    func run() async throws {
        begin("blogpost: a virtual title from author and date, observed and sorted in memory (seed 001)")
        try await withStorePath("blog") { path in
            let container = try ModelContainer(for: [Author.self, BlogPost.self], path: path)
            defer { try? container.close() }
            let context = ModelContext(container)
            let ada = Author(), grace = Author()
            ada.name = "Ada"
            grace.name = "Grace"
            for (author, day) in [(ada, "2026-11-01"), (grace, "2026-10-15"), (ada, "2026-09-30")] {
                let post = BlogPost()
                post.postDate = BlogPost.day.date(from: day)!
                post.author = author
                context.insert(post)
            }
            context.insert(ada)
            context.insert(grace)
            try context.save()

            let november = try context.fetch(
                FetchDescriptor<BlogPost>(sortBy: [FetchSortDescriptor("postDate", ascending: false)]))[0]
            try show("title", november.title, expected: "Ada — 2026-11-01")
            var told: [String] = []
            let token = try november.observe(\.title) { _, change in change.newValue.map { told.append($0) } }
            ada.name = "Ada Lovelace"
            say("renamed the author: the post's title observers are told through the to-one")
            try show("title observer", told, expected: ["Ada Lovelace — 2026-11-01"])
            november.postDate = BlogPost.day.date(from: "2026-11-02")!
            try show("title observer after a new date", told.last ?? "", expected: "Ada Lovelace — 2026-11-02")
            token.cancel()
            try context.save()

            do {
                _ = try context.fetch(FetchDescriptor<BlogPost>(sortBy: [FetchSortDescriptor("title")]))
                throw ExampleFailure(description: "a store sort by a computed property was accepted")
            } catch StrataError.invalidFetch(let message) {
                say("a store sort by title is refused: \(message)")
            }
            var byTitle = FetchDescriptor<BlogPost>()
            byTitle.inMemorySortBy = [InMemorySortDescriptor(\.title)]
            var results = context.results(of: byTitle).makeAsyncIterator()
            try show("sorted in memory by title", try await results.next()?.map(\.title) ?? [], expected: [
                "Ada Lovelace — 2026-09-30", "Ada Lovelace — 2026-11-02", "Grace — 2026-10-15",
            ])
            let editor = ModelContext(container)
            let graceInEditor = try editor.fetch(
                FetchDescriptor<Author>(predicate: try FetchPredicate(format: "name == 'Grace'")))[0]
            graceInEditor.name = "Aaron"
            try editor.save()
            say("another context renamed Grace to Aaron and saved: the results sequence yields the new order")
            try show("sorted in memory by title", try await results.next()?.map(\.title) ?? [], expected: [
                "Aaron — 2026-10-15", "Ada Lovelace — 2026-09-30", "Ada Lovelace — 2026-11-02",
            ])
        }
    }
}
