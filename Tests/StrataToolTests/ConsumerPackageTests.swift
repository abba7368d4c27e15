import Foundation
import StrataTesting
import Testing

/// Strata as a user gets it: a clone of the committed `HEAD`, tagged `0.0.1`, is a versioned
/// dependency (`.package(url: "file://…", from: "0.0.1")`) of a new package whose sources are
/// the README's ```swift blocks; the package must resolve, build without a warning or an error
/// and run. SwiftPM refuses a versioned dependency whose targets use `unsafeFlags`, and a README
/// example that does not compile is a broken promise: this test catches both.
///
/// Each block becomes a function of its own file (its `import` lines hoisted to the file's
/// top; `async` when the block awaits, as its top-level code would be), so examples with
/// top-level code coexist; `main.swift` calls them in README order, in a fresh directory. A block whose fence reads ```` ```swift no-compile ```` is left out (keep
/// that rare). Uncommitted changes are not in the clone; `STRATA_CONSUMER_SOURCE=PATH` clones
/// another repository instead (to try a change before committing it).
///
/// Budget: one debug build of StrataStorage, StrataRecords and Strata (and resolving the package graph
/// from the local mirror).
@Suite(.serialized) struct ConsumerPackageTests {
    /// The README's compilable ```swift blocks, in order.
    static func swiftBlocks(of readme: String) -> [String] {
        enum State { case prose, compiled([Substring]), skipped }
        var state = State.prose
        var blocks: [String] = []
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            switch state {
            case .prose:
                // A fence's info string: its first word is the language.
                let info = trimmed.hasPrefix("```") ? trimmed.dropFirst(3).split(separator: " ") : []
                if info.first == "swift" { state = info.contains("no-compile") ? .skipped : .compiled([]) }
                else if trimmed.hasPrefix("```") { state = .skipped }
            case .compiled(var lines):
                if trimmed == "```" {
                    blocks.append(lines.joined(separator: "\n"))
                    state = .prose
                } else {
                    lines.append(line)
                    state = .compiled(lines)
                }
            case .skipped:
                if trimmed == "```" { state = .prose }
            }
        }
        return blocks
    }

    /// Whether a block's top-level code is async: an `await` outside the functions it declares
    /// (then Swift picks the `async` overloads of all its calls, as in a `main.swift`).
    static func isAsync(_ block: String) -> Bool {
        var depth = 0
        for line in block.split(separator: "\n") {
            if depth == 0 && !line.hasPrefix("func ") && line.contains("await ") { return true }
            if depth > 0 || line.hasPrefix("func ") {
                depth += line.filter { $0 == "{" }.count - line.filter { $0 == "}" }.count
            }
        }
        return false
    }

    /// Splits a block into its type declarations (a line at column 0 opening a class, struct,
    /// enum, protocol or extension, to its closing brace) and the rest: in a `main.swift` the
    /// declarations are file-scope types, so they stay at file scope here.
    static func declarationsAndCode(_ lines: [Substring]) -> (declarations: [Substring], code: [Substring]) {
        let openers = ["final class ", "class ", "struct ", "enum ", "protocol ", "extension ", "actor "]
        var declarations: [Substring] = [], code: [Substring] = []
        var depth = 0
        for line in lines {
            if depth == 0 && !openers.contains(where: { line.hasPrefix($0) }) {
                code.append(line)
                continue
            }
            declarations.append(line)
            depth += line.filter { $0 == "{" }.count - line.filter { $0 == "}" }.count
        }
        return (declarations, code)
    }

    /// A source file for README block `n`: its imports and type declarations, then its code as
    /// `readmeExample<n>()`.
    static func sourceFile(_ block: String, _ n: Int) -> String {
        let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
        let imports = lines.filter { $0.hasPrefix("import ") }
        let (declarations, code) = declarationsAndCode(lines.filter { !$0.hasPrefix("import ") })
        let body = code.map { "    " + $0 }
        return "// README.md, swift block \(n + 1).\n" + imports.joined(separator: "\n") + "\n\n"
            + (declarations.isEmpty ? "" : declarations.joined(separator: "\n") + "\n\n")
            + "func readmeExample\(n + 1)() \(isAsync(block) ? "async " : "")throws {\n" + body.joined(separator: "\n") + "\n}\n"
    }

    /// Runs `command` in `directory` through the shell; returns its status and merged output.
    static func shell(_ command: String, in directory: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command + " 2>&1"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A file that imports Foundation, Strata and StrataRecords together and uses both layers'
    /// names unqualified (one vocabulary per import, decision 51): an object-layer class with its
    /// wrappers beside a record-layer model, values and predicates. An ambiguous or shadowed name
    /// fails the build.
    static let bothLayersSource = #"""
        // Both layers in one file: no name of one shadows a name of the other.
        import Foundation
        import Strata
        import StrataRecords

        final class Drink: ManagedObject {
            @Attribute var name: String
            @Attribute(default: 0) var price: Decimal
        }

        func bothLayersInOneFile() throws {
            let directory = FileManager.default.currentDirectoryPath
            let model = try Model {
                Entity("Shelf") {
                    AttributeDescription("label", .string)
                    RelationshipDescription("drinks", toMany: "Bottle", inverse: "shelf")
                    DerivedAttributeDescription("drinkCount", .int64, "drinks.@count")
                }
                Entity("Bottle") {
                    AttributeDescription("name", .string)
                    RelationshipDescription("shelf", toOne: "Shelf", inverse: "drinks")
                }
            }
            let store = try RecordStore(path: directory + "/both-records.strata", model: model)
            let shelf = try store.write { tx in
                let shelf = try tx.insert("Shelf", ["label": "top"])
                try tx.insert("Bottle", ["name": "tea", "shelf": shelf])
                try tx.insert("Bottle", ["name": "mate", "shelf": shelf])
                return shelf
            }
            let count: StoredValue = try store.read { try $0.value("drinkCount", of: shelf) }
            try store.close()

            let container = try ModelContainer(for: [Drink.self], path: directory + "/both-objects.strata")
            let context = ModelContext(container)
            let drink = Drink()
            drink.name = "tea"
            context.insert(drink)
            try context.save()
            let found = try context.fetch(FetchDescriptor<Drink>(predicate: try FetchPredicate(format: "name == %@", "tea")))
            print("both layers: \(count.doubleValue.map { Int($0) } ?? -1) rows, \(found.count) object, \(found.first?.name ?? "?")")
            try container.close()
        }

        """#

    /// A second program of the consumer package: a record store replicated to PostgreSQL through
    /// `StrataPostgres`, given the URL as its argument (the password in `PGPASSWORD`).
    static let replicatingSource = #"""
        import Foundation
        import StrataPostgres
        import StrataRecords

        let directory = FileManager.default.currentDirectoryPath
        let model = try Model {
            Entity("Shelf") {
                AttributeDescription("label", .string)
                RelationshipDescription("bottles", toMany: "Bottle", inverse: "shelf")
                DerivedAttributeDescription("bottleCount", .int64, "bottles.@count")
            }
            Entity("Bottle") {
                AttributeDescription("name", .string)
                RelationshipDescription("shelf", toOne: "Shelf", inverse: "bottles")
            }
        }
        let store = try RecordStore(path: directory + "/replicated.strata", model: model, history: .on)
        try store.write { tx in
            let shelf = try tx.insert("Shelf", ["label": "top"])
            try tx.insert("Bottle", ["name": "tea", "shelf": shelf])
            try tx.insert("Bottle", ["name": "mate", "shelf": shelf])
        }
        let destination = try PostgresDestination(url: CommandLine.arguments[1])
        let report = try await PostgresReplicator(store: store, destination: destination).push()
        print("replicated: \(report.rows) rows")
        try store.close()

        """#

    /// The packages a dependent of Strata's libraries resolves: those its products use, none of
    /// them for PostgreSQL (StrataPostgres uses the system's libpq), a network stack or TLS.
    static let expectedPins: Set<String> = []

    @Test func readmeExamplesBuildAndRunInAConsumerOfATaggedClone() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("strata-consumer-\(getpid())").path
        try? FileManager.default.removeItem(atPath: root)
        try FileManager.default.createDirectory(atPath: root + "/consumer/Sources/Consumer", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/consumer/Sources/Replicating", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/run", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let source = ProcessInfo.processInfo.environment["STRATA_CONSUMER_SOURCE"] ?? Tool.packageRoot
        let clone = try Self.shell("git clone -q '\(source)' strata && git -C strata tag 0.0.1", in: root)
        try #require(clone.status == 0, "cloning \(source): \(clone.output)")

        let readme = try String(contentsOfFile: root + "/strata/README.md", encoding: .utf8)
        let blocks = Self.swiftBlocks(of: readme)
        #expect(blocks.count >= 2, "README has \(blocks.count) compilable swift blocks")
        for (n, block) in blocks.enumerated() {
            try Self.sourceFile(block, n).write(toFile: "\(root)/consumer/Sources/Consumer/ReadmeExample\(n + 1).swift", atomically: true, encoding: .utf8)
        }
        try Self.bothLayersSource.write(toFile: root + "/consumer/Sources/Consumer/BothLayers.swift", atomically: true, encoding: .utf8)
        let main = "// Runs the README's examples in order, then both layers in one file.\n"
            + blocks.indices.map { "try \(Self.isAsync(blocks[$0]) ? "await " : "")readmeExample\($0 + 1)()" }.joined(separator: "\n")
            + "\ntry bothLayersInOneFile()\n"
        try main.write(toFile: root + "/consumer/Sources/Consumer/main.swift", atomically: true, encoding: .utf8)
        try Self.replicatingSource.write(toFile: root + "/consumer/Sources/Replicating/main.swift", atomically: true, encoding: .utf8)
        let manifest = """
            // swift-tools-version:6.0
            import PackageDescription

            let package = Package(
                name: "Consumer",
                platforms: [.macOS(.v15)],
                dependencies: [.package(url: "file://\(root)/strata", from: "0.0.1")],
                targets: [
                    .executableTarget(
                        name: "Consumer",
                        dependencies: [
                            .product(name: "StrataStorage", package: "strata"),
                            .product(name: "StrataRecords", package: "strata"),
                            .product(name: "Strata", package: "strata"),
                        ],
                        path: "Sources/Consumer",
                        swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
                    ),
                    .executableTarget(
                        name: "Replicating",
                        dependencies: [
                            .product(name: "StrataRecords", package: "strata"),
                            .product(name: "StrataPostgres", package: "strata"),
                        ],
                        path: "Sources/Replicating",
                        swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
                    ),
                ],
                swiftLanguageModes: [.v6]
            )

            """
        try manifest.write(toFile: root + "/consumer/Package.swift", atomically: true, encoding: .utf8)

        let start = Date()
        let build = try Self.shell("swift build", in: root + "/consumer")
        let seconds = Date().timeIntervalSince(start)
        if build.output.contains("unsafe build flags") || build.output.contains("unsafeFlags") {
            Issue.record("""
                SwiftPM refuses Strata as a versioned dependency: a target of the package uses \
                unsafeFlags (StrataStorage's -enforce-exclusivity=unchecked; the storage-write \
                branch removes it). SwiftPM said:
                \(build.output.split(separator: "\n").filter { $0.contains("error") }.prefix(5).joined(separator: "\n"))
                """)
            return
        }
        #expect(build.status == 0, "the README's examples do not build in a consumer package:\n\(build.output)")
        let warnings = build.output.split(separator: "\n").filter { $0.contains("warning:") && !$0.contains("/.build/checkouts/") }
        #expect(warnings.isEmpty, "warnings building the README's examples:\n\(warnings.joined(separator: "\n"))")
        guard build.status == 0 else { return }
        print("ConsumerPackageTests: resolved and built the consumer (debug, StrataStorage + StrataRecords + Strata + StrataPostgres) in \(Int(seconds)) s")

        // What the dependent resolved: Package.resolved names every package it holds (none: then
        // SwiftPM writes no file at all).
        let resolved = (try? String(contentsOfFile: root + "/consumer/Package.resolved", encoding: .utf8)) ?? ""
        let pins = Set(resolved.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "\"identity\" : \"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        })
        print("ConsumerPackageTests: the consumer resolved \(pins.isEmpty ? "no package" : pins.sorted().joined(separator: ", "))")
        #expect(pins.subtracting(["strata"]) == Self.expectedPins,
                "a dependent of Strata's libraries resolves \(pins.sorted()), expected Strata and \(Self.expectedPins.sorted())")
        #expect(!pins.contains { ["postgres", "nio", "ssl", "crypto"].contains(where: $0.contains) }, "\(pins.sorted())")
        let run = try Self.shell("'\(root)/consumer/.build/debug/Consumer'", in: root + "/run")
        #expect(run.status == 0, "the README's examples fail when run:\n\(run.output)")
        #expect(run.output.contains("Ada Lovelace"), "\(run.output)")
        #expect(run.output.contains("Groceries: 2 items, total 5.5"), "the Objects example printed:\n\(run.output)")
        #expect(run.output.contains(#"1 ["insert TodoList/1"]"#) && run.output.contains(#"2 ["update TodoList/1"]"#),
                "the History example printed:\n\(run.output)")
        #expect(run.output.contains("both layers: 2 rows, 1 object, tea"), "the file importing both layers printed:\n\(run.output)")

        // The replicating program pushes its store to a throwaway PostgreSQL database.
        let cluster = try PostgresCluster.shared
        let (database, url) = try cluster.makeDatabase()
        let replicate = try Self.shell("PGPASSWORD='\(cluster.password)' '\(root)/consumer/.build/debug/Replicating' '\(url)'",
                                       in: root + "/run")
        #expect(replicate.status == 0 && replicate.output.contains("replicated: "), "\(replicate.output)")
        let counts = try cluster.psql("SELECT label, \"bottleCount\" FROM \"Shelf\"", database: database)
        #expect(counts.trimmingCharacters(in: .whitespacesAndNewlines) == "top|2", "PostgreSQL holds \(counts)")
        // The results-sequence example moved to `strata-examples blogpost`, the properties one to
        // `strata-examples properties` (ExamplesToolTests runs both).
    }
}
