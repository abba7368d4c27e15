import Foundation
import Testing

/// `docs/architecture.md` ends with a map from each concept to the files that hold it: what a
/// newcomer reads to find their way. A file renamed, split or moved without the map
/// following would send them nowhere, so every path the map names must exist.
@Suite struct ArchitectureMapTests {
    static let root = DocumentationArticleTests.root

    /// The map's rows: (concept, the paths its files column names in backticks).
    static func rows() throws -> [(concept: String, paths: [String])] {
        let text = try String(contentsOfFile: root + "/docs/architecture.md", encoding: .utf8)
        guard let start = text.range(of: "## Where each concept lives") else { return [] }
        var rows: [(String, [String])] = []
        for line in text[start.upperBound...].split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, cells[1] != "concept" else { continue }
            let quoted = cells[2].split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element) }
            let paths = quoted.filter { $0.hasSuffix(".swift") || $0.hasSuffix(".md") || $0.hasSuffix("/") || isRooted($0) }
            rows.append((cells[1], paths))
        }
        return rows
    }

    static func isRooted(_ path: String) -> Bool {
        ["Sources/", "Tests/", "Benchmarks/"].contains { path.hasPrefix($0) }
    }

    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: root + "/" + (path.hasSuffix("/") ? String(path.dropLast()) : path))
    }

    /// Where a path of a row is: rooted paths as written; a bare name in the folder of the
    /// row's first rooted path (the map's rule), or its module's folder (`Model/Relationship.swift`
    /// after a file of `Sources/Strata/Model`), or the repository's top or `docs/`.
    static func resolve(_ path: String, base: String?) -> String? {
        if isRooted(path) { return exists(path) ? path : nil }
        var candidates: [String] = []
        if let base {
            candidates.append(base + "/" + path)
            candidates.append((base as NSString).deletingLastPathComponent + "/" + path)
        }
        candidates += [path, "docs/" + path]
        return candidates.first(where: exists)
    }

    @Test func everyFileTheMapNamesExists() throws {
        let rows = try Self.rows()
        #expect(rows.count >= 40, "the map lost its rows: \(rows.count)")
        for (concept, paths) in rows {
            #expect(!paths.isEmpty, "'\(concept)' names no file")
            var base: String?
            for path in paths {
                let found = Self.resolve(path, base: base)
                #expect(found != nil, "'\(concept)': \(path) does not exist")
                guard let found, Self.isRooted(path) else { continue }
                // A file sets the folder the row's bare names are in; a folder does so only first.
                if path.hasSuffix(".swift") {
                    base = (found as NSString).deletingLastPathComponent
                } else if base == nil {
                    base = path.hasSuffix("/") ? String(path.dropLast()) : path
                }
            }
        }
    }

    @Test func theMapCoversEveryLibraryFolder() throws {
        // Each folder of the three libraries holds at least one file the map names: a new
        // folder (a new concern) gets a row.
        let named = Set(try Self.rows().flatMap(\.paths).filter { $0.hasPrefix("Sources/") && $0.hasSuffix(".swift") }
            .map { ($0 as NSString).deletingLastPathComponent })
        for module in ["StrataStorage", "StrataRecords", "Strata"] {
            let folder = "Sources/\(module)"
            let entries = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/" + folder)
            for entry in entries.sorted() where !entry.hasSuffix(".docc") {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: Self.root + "/" + folder + "/" + entry, isDirectory: &isDirectory),
                      isDirectory.boolValue else { continue }
                #expect(named.contains(folder + "/" + entry), "docs/architecture.md names no file of \(folder)/\(entry)")
            }
        }
    }
}
