import Foundation

/// A value an example printed a claim about was not what it claimed.
struct ExampleFailure: Error, CustomStringConvertible {
    let description: String
}

/// Prints the heading of an example.
func begin(_ title: String) {
    print("== \(title)")
}

/// Prints a line of narrative: what the example does next.
func say(_ line: String) {
    print("   \(line)")
}

/// Prints `label: actual` when it equals `expected`, and throws otherwise: the examples'
/// output is a list of checked claims.
func show<T: Equatable>(_ label: String, _ actual: T, expected: T) throws {
    guard actual == expected else {
        throw ExampleFailure(description: "\(label): expected \(expected), got \(actual)")
    }
    print("   \(label): \(actual)")
}

/// A store in a fresh temporary directory, removed afterwards.
func withStorePath<T>(_ name: String, _ body: (String) throws -> T) throws -> T {
    let dir = try makeStoreDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    return try body(dir.appendingPathComponent("\(name).strata").path)
}

/// A store in a fresh temporary directory, removed afterwards, for an async body.
func withStorePath<T>(_ name: String, isolation: isolated (any Actor)? = #isolation,
                      _ body: (String) async throws -> T) async throws -> T {
    let dir = try makeStoreDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    return try await body(dir.appendingPathComponent("\(name).strata").path)
}

private func makeStoreDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-examples-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}
