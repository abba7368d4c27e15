import Testing
@testable import StrataStorage
// Re-exported to every file of this test target: the simulated file system and the seeded
// generator moved to the StrataTesting target, and the suites keep using them by name.
@_exported import StrataTesting
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp for one test, removed by `cleanup()`.
struct TempDir {
    let path: String

    init(_ name: String = #function) {
        var template = Array("/tmp/strata-test-XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: p!)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func cleanup() {
        _ = system("rm -rf '\(path)'")
    }
}

/// The seeded generator every random test uses (its seed is printed on failure).
typealias SeededRandom = SplitMix64

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

func key(_ i: Int) -> [UInt8] {
    var k = Array(String(i).utf8)
    while k.count < 8 { k.insert(UInt8(ascii: "0"), at: 0) }
    return k
}

func randomBytes(_ n: Int, _ rng: inout SeededRandom) -> [UInt8] {
    (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
}

func testOptions(_ durability: Durability = .full) -> StoreOptions {
    var o = StoreOptions(durability: durability)
    o.strictChecks = false
    return o
}

/// Expects `store`'s trees to hold exactly `model` (tree name → key → value).
func expectTrees(of store: Store, hold model: [String: [[UInt8]: [UInt8]]], _ context: String) throws {
    try store.read { tx in
        for (name, entries) in model {
            let t = try #require(try tx.tree(name), "\(context): tree \(name)")
            #expect(try t.count == entries.count, "\(context): tree \(name)")
            for (k, v) in entries { #expect(try t.get(k) == v, "\(context): tree \(name) key \(k)") }
        }
    }
}

/// Backs `store` up beside it and closes it; then expects it and the backup to reopen with a
/// clean check, holding exactly `model`.
func expectBackupAndReopen(_ store: Store, hold model: [String: [[UInt8]: [UInt8]]], fs: SimulatedFileSystem,
                           _ context: String) throws {
    let backup = relPath + ".backup"
    _ = try store.backup(to: backup)
    try store.close()
    for path in [relPath, backup] {
        let reopened = try Store(path: path, options: relOptions(fs))
        defer { try? reopened.close() }
        #expect(try reopened.check().isClean, "\(context): \(path)")
        try expectTrees(of: reopened, hold: model, "\(context): \(path)")
    }
}
