import Foundation
import Testing

/// Raw pointer access in every library (StrataStorage, StrataRecords, Strata, StrataPostgres)
/// lives in `+Unsafe.swift` files, each opening with the invariants that make its accesses safe
/// (decision 58, and the comment on `Page`). This reads each module's sources and fails, naming
/// the file and line, when a pointer load, store, copy, rebinding or manual allocation appears
/// anywhere else.
@Suite struct UnsafeAuditTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// The libraries and the fewest Swift files and `+Unsafe.swift` files each has (so that a
    /// scan that finds nothing fails instead of passing).
    static let modules: [(name: String, files: Int, unsafeFiles: Int)] = [
        ("StrataStorage", 50, 7), ("StrataRecords", 50, 1), ("Strata", 50, 2), ("StrataPostgres", 10, 1),
    ]

    /// What raw access looks like in this code base.
    static let rawAccess = ["load(fromByteOffset", "loadUnaligned(", "storeBytes(", "bindMemory(",
                            "assumingMemoryBound(", "withMemoryRebound(", "copyMemory(", "initializeMemory(",
                            "RawPointer(bitPattern:", ".allocate(", ".deallocate("]

    /// Files allowed raw access of a kind outside the rule, with the reason in their own comment:
    /// `Condition` allocates its pthread objects (which Swift never reads or writes).
    static let exceptions: [String: Set<String>] = ["StrataStorage/Concurrency/Condition.swift": [".allocate(", ".deallocate("]]

    /// The Swift files of `module`, as paths from `Sources/`.
    static func swiftFiles(of module: String) throws -> [String] {
        let files = FileManager.default.enumerator(atPath: root.appendingPathComponent(module).path)?
            .compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".swift") }.sorted().map { module + "/" + $0 }
    }

    @Test(arguments: modules.map(\.name))
    func rawAccessLivesOnlyInUnsafeFiles(module: String) throws {
        let files = try Self.swiftFiles(of: module)
        let least = Self.modules.first { $0.name == module }?.files ?? 1
        #expect(files.count >= least, "the scan found only \(files)")
        for file in files where !file.hasSuffix("+Unsafe.swift") {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                for token in Self.rawAccess where code.contains(token) {
                    if Self.exceptions[file]?.contains(token) == true { continue }
                    Issue.record("\(file):\(number + 1): `\(token)` outside a +Unsafe.swift file")
                }
            }
        }
    }

    @Test(arguments: modules.map(\.name))
    func eachUnsafeFileOpensWithItsInvariants(module: String) throws {
        let unsafeFiles = try Self.swiftFiles(of: module).filter { $0.hasSuffix("+Unsafe.swift") }
        let least = Self.modules.first { $0.name == module }?.unsafeFiles ?? 1
        #expect(unsafeFiles.count >= least, "the scan found only \(unsafeFiles)")
        for file in unsafeFiles {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            // The comment before the first declaration (imports, conditional ones too, aside) says
            // why the access is safe.
            let lines = text.split(separator: "\n").drop {
                $0.hasPrefix("import ") || $0.hasPrefix("#if canImport") || $0.hasPrefix("#elseif canImport")
                    || $0.hasPrefix("#endif") || $0.isEmpty
            }
            let comment = lines.prefix { $0.hasPrefix("///") }.joined(separator: " ")
            #expect(comment.contains("nvariant") && comment.count > 200,
                    "\(file) does not open with the invariants that make its raw access safe")
        }
    }
}
