import Foundation
import Testing

/// Core Data's threading rule, enforced by the compiler: a `ModelContext` and its objects stay
/// in one isolation domain; `ManagedObjectID` (and the `ModelContainer`) cross. Small programs
/// against the built `Strata` module are compiled through SIL (where Swift 6 checks sending):
/// those that send IDs or make a context inside a task compile; each that sends a context or
/// an object out of its domain must fail with a data-race error.
@Suite struct SendableCheckTests {
    static let crosses = """
        import Strata
        final class Note: ManagedObject { @Attribute var text: String }
        // IDs and the container cross tasks; each task makes its own context (a background context).
        func roundTrip(_ container: ModelContainer, _ id: ManagedObjectID) async throws -> String {
            let text = try await Task.detached { () throws -> String in
                let background = ModelContext(container)
                return try background.existingObject(with: id, as: Note.self).text
            }.value
            let context = ModelContext(container)
            _ = try context.object(with: id)
            return text
        }
        actor Importer {
            let container: ModelContainer
            init(container: ModelContainer) { self.container = container }
            func importNote(_ text: String) throws -> ManagedObjectID {
                let context = ModelContext(container)   // lives in the actor's domain
                let note = Note()
                note.text = text
                context.insert(note)
                try context.save()
                return note.objectID
            }
        }
        """

    /// Programs that must not compile: (name, body after `import Strata` and the Note class).
    static let staysHome: [(String, String)] = [
        ("a context sent to a detached task", """
            func f(_ context: ModelContext) async {
                await Task.detached { _ = context.hasChanges }.value
            }
            """),
        ("an object sent to a detached task", """
            func f(_ note: Note) async {
                await Task.detached { _ = note.text }.value
            }
            """),
        ("a context passed into an actor", """
            actor Worker { func use(_ c: ModelContext) {} }
            func f(_ context: ModelContext, _ w: Worker) async {
                await w.use(context)
            }
            """),
        ("an object returned out of an actor", """
            actor Holder {
                let context: ModelContext
                init(_ c: ModelContainer) { context = ModelContext(c) }
                func note() throws -> Note { try context.fetch(FetchDescriptor<Note>())[0] }
            }
            func f(_ h: Holder) async throws {
                let n = try await h.note()
                _ = n
            }
            """),
    ]

    /// Compiles `source` to SIL against the release build's modules; returns the status and
    /// the compiler's output.
    static func compile(_ source: String, named name: String) throws -> (Int32, String) {
        let root = Tool.packageRoot
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-sendable-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(name + ".swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-emit-sil", "-o", "/dev/null", "-swift-version", "6",
                             "-I", root + "/.build/release/Modules",
                             "-Xcc", "-fmodule-map-file=" + root + "/Sources/CLZ4/module.modulemap",
                             "-Xcc", "-fmodule-map-file=" + root + "/.build/release/CCRC32C.build/module.modulemap",
                             "-Xcc", "-I" + root + "/Sources/CCRC32C/include",
                             "-Xcc", "-fmodule-map-file=" + root + "/.build/release/CFileHints.build/module.modulemap",
                             "-Xcc", "-I" + root + "/Sources/CFileHints/include", file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A derived attribute is read-only in Swift: assigning one does not compile.
    @Test func assigningADerivedAttributeDoesNotCompile() throws {
        let source = """
            import Strata
            final class Note: ManagedObject {
                @Attribute var text: String
                @Derived("lowercase:(text)") var lower: String
            }
            func f(_ n: Note) { n.lower = "x" }
            """
        let (status, output) = try Self.compile(source, named: "derived")
        #expect(status != 0, "assigning a derived attribute compiled")
        #expect(output.contains("lower"), "\(output)")
    }

    @Test func identifiersCrossDomainsContextsAndObjectsDoNot() throws {
        let header = "import Strata\nfinal class Note: ManagedObject { @Attribute var text: String }\n"
        let (status, output) = try Self.compile(Self.crosses, named: "crosses")
        #expect(status == 0, "sending IDs and making contexts inside tasks must compile:\n\(output)")
        for (n, (what, body)) in Self.staysHome.enumerated() {
            let (status, output) = try Self.compile(header + body, named: "stays\(n)")
            #expect(status != 0, "\(what) compiled: a context or object could race")
            #expect(output.contains("data race") || output.contains("Sendable"),
                    "\(what): expected a data-race diagnostic, got:\n\(output)")
        }
    }
}
