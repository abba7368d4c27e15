import Foundation

/// Where the `strata` tool is. The benchmark runs `strata replicate` as a child process instead
/// of linking StrataPostgres: the bench package would otherwise build SwiftNIO and BoringSSL a
/// second time in its own build directory, which would take CI past its 20 minutes. The tool is
/// the root package's, built there (`make bench` builds it first; `make test` builds it with
/// the root's tests).
enum StrataTool {
    /// The tool to run: `option` (`--strata`), else `STRATA_TOOL`, else the root checkout's
    /// release build, else its debug build, found from this executable's place
    /// (`<root>/.build/bench-build/release/strata-bench` → `<root>/.build/release/strata`) or
    /// from the current directory. Throws, saying how to build it, when there is none.
    static func locate(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> String {
        if let given = option ?? environment["STRATA_TOOL"] {
            guard FileManager.default.isExecutableFile(atPath: given) else {
                throw BenchError("no executable strata tool at \(given) (from \(option != nil ? "--strata" : "STRATA_TOOL"))")
            }
            return given
        }
        let candidates = self.candidates(executable: Measure.executablePath(),
                                         currentDirectory: FileManager.default.currentDirectoryPath)
        if let found = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) { return found }
        throw BenchError("no strata tool (looked for \(candidates.joined(separator: ", "))): build it at the checkout's "
                         + "root with `swift build -c release --product strata` (make bench does), or name one with "
                         + "--strata PATH or STRATA_TOOL")
    }

    /// The paths tried, in order: release before debug in the root's `.build` above
    /// `executable` (for a bench built in `Benchmarks/.build`, the root's beside it), then in
    /// `currentDirectory`'s. Release first: it is what `make bench` and `make test` build.
    static func candidates(executable: String, currentDirectory: String) -> [String] {
        var buildDirectories: [String] = []
        var url = URL(fileURLWithPath: executable).resolvingSymlinksInPath()
        while url.pathComponents.count > 1 {
            url.deleteLastPathComponent()
            guard url.lastPathComponent == ".build" else { continue }
            let package = url.deletingLastPathComponent()
            // The bench package's own .build: the root package is its parent directory.
            buildDirectories.append(package.lastPathComponent == "Benchmarks"
                ? package.deletingLastPathComponent().appendingPathComponent(".build").path : url.path)
            break
        }
        buildDirectories.append(URL(fileURLWithPath: currentDirectory).appendingPathComponent(".build").path)
        var paths: [String] = []
        for directory in buildDirectories {
            for configuration in ["release", "debug"] where !paths.contains("\(directory)/\(configuration)/strata") {
                paths.append("\(directory)/\(configuration)/strata")
            }
        }
        return paths
    }
}
