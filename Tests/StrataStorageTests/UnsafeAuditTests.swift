import Foundation
import Testing

/// Raw pointer access in StrataStorage lives in `+Unsafe.swift` files, each opening with the
/// invariants that make its accesses safe (decision 58, and the comment on `Page`). This reads
/// the module's sources and fails, naming the file and line, when a pointer load, store, copy,
/// rebinding or manual allocation appears anywhere else.
@Suite struct UnsafeAuditTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/StrataStorage")

    /// What raw access looks like in this code base.
    static let rawAccess = ["load(fromByteOffset", "loadUnaligned(", "storeBytes(", "bindMemory(",
                            "assumingMemoryBound(", "withMemoryRebound(", "copyMemory(", "initializeMemory(",
                            "RawPointer(bitPattern:", ".allocate(", ".deallocate("]

    /// Files allowed raw access of a kind outside the rule, with the reason in their own comment:
    /// `Condition` allocates its pthread objects (which Swift never reads or writes).
    static let exceptions: [String: Set<String>] = ["Concurrency/Condition.swift": [".allocate(", ".deallocate("]]

    static func swiftFiles() throws -> [String] {
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".swift") }.sorted()
    }

    @Test func rawAccessLivesOnlyInUnsafeFiles() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 50, "the scan found only \(files)")
        for file in files where !file.hasSuffix("+Unsafe.swift") {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                for token in Self.rawAccess where code.contains(token) {
                    if Self.exceptions[file]?.contains(token) == true { continue }
                    Issue.record("\(file):\(number + 1): `\(token)` outside a +Unsafe.swift file")
                }
            }
        }
    }

    @Test func eachUnsafeFileOpensWithItsInvariants() throws {
        let unsafeFiles = try Self.swiftFiles().filter { $0.hasSuffix("+Unsafe.swift") }
        #expect(unsafeFiles.count >= 7, "the scan found only \(unsafeFiles)")
        for file in unsafeFiles {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            // The comment before the first declaration (imports aside) says why the access is safe.
            let lines = text.split(separator: "\n").drop { $0.hasPrefix("import ") || $0.isEmpty }
            let comment = lines.prefix { $0.hasPrefix("///") }.joined(separator: " ")
            #expect(comment.contains("nvariant") && comment.count > 200,
                    "\(file) does not open with the invariants that make its raw access safe")
        }
    }
}
