import Foundation
import Testing

/// The DocC catalogs' code (`Sources/<Module>/<Module>.docc`, built by `make docs`): DocC does
/// not compile an article's code, so every ```` ```swift ```` block of an article must be code
/// that is compiled elsewhere, line for line in order (indentation and blank lines aside): a
/// README block, which `ConsumerPackageTests` builds and runs as a user's package, or a run of
/// lines of one `strata-examples` source file, which the package builds and `ExamplesToolTests`
/// runs. An article whose code drifts from the API fails here, naming the block.
@Suite struct DocumentationArticleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let catalogs = ["StrataStorage", "StrataRecords", "Strata"]

    /// A text's lines that carry code: trimmed, blank ones dropped.
    static func codeLines(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Whether `run` occurs in `lines` as consecutive lines.
    static func contains(_ lines: [String], run: [String]) -> Bool {
        guard !run.isEmpty, run.count <= lines.count else { return run.isEmpty }
        return (0...(lines.count - run.count)).contains { start in lines[start..<(start + run.count)].elementsEqual(run) }
    }

    /// Every article of the three catalogs, as (path relative to the root, text).
    static func articles() throws -> [(path: String, text: String)] {
        try catalogs.flatMap { module in
            let folder = "Sources/\(module)/\(module).docc"
            return try FileManager.default.contentsOfDirectory(atPath: root + "/" + folder).sorted()
                .filter { $0.hasSuffix(".md") }
                .map { (folder + "/" + $0, try String(contentsOfFile: root + "/" + folder + "/" + $0, encoding: .utf8)) }
        }
    }

    /// Where compiled code is: each README block, and each strata-examples file, as code lines.
    static func compiledSources() throws -> [(name: String, lines: [String])] {
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
        let examples = root + "/Sources/strata-examples"
        let files = try FileManager.default.contentsOfDirectory(atPath: examples).filter { $0.hasSuffix(".swift") }.sorted()
        return try ConsumerPackageTests.swiftBlocks(of: readme).enumerated().map { ("README.md block \($0.offset + 1)", codeLines($0.element)) }
            + files.map { ("Sources/strata-examples/\($0)", codeLines(try String(contentsOfFile: examples + "/" + $0, encoding: .utf8))) }
    }

    @Test func eachCatalogHasALandingPageAndAGettingStartedArticle() throws {
        let paths = Set(try Self.articles().map(\.path))
        for module in Self.catalogs {
            #expect(paths.contains("Sources/\(module)/\(module).docc/\(module).md"), "\(module)'s catalog has no landing page")
            #expect(paths.contains("Sources/\(module)/\(module).docc/GettingStarted.md"), "\(module)'s catalog has no getting-started article")
        }
    }

    @Test func everyArticleSwiftBlockIsCompiledCode() throws {
        let sources = try Self.compiledSources()
        var checked = 0
        for article in try Self.articles() {
            for (n, block) in ConsumerPackageTests.swiftBlocks(of: article.text).enumerated() {
                let run = Self.codeLines(block)
                checked += 1
                #expect(sources.contains { Self.contains($0.lines, run: run) }, """
                    \(article.path), swift block \(n + 1), is not a run of lines of a README example or of a \
                    strata-examples file (copy it from there again):
                    \(block)
                    """)
            }
        }
        #expect(checked >= 15, "only \(checked) swift blocks in the catalogs")
    }

    /// The getting-started articles show the README's examples whole, so they say what the
    /// README says.
    @Test func gettingStartedArticlesHoldAReadmeExampleWhole() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let examples = ConsumerPackageTests.swiftBlocks(of: readme).map(Self.codeLines)
        for article in try Self.articles() where article.path.hasSuffix("/GettingStarted.md") {
            let blocks = ConsumerPackageTests.swiftBlocks(of: article.text).map(Self.codeLines)
            #expect(blocks.contains { examples.contains($0) }, "\(article.path) shows no README example whole")
        }
    }
}
