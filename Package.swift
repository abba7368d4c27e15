// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataStorage", targets: ["StrataStorage"]),
        .library(name: "StrataRecords", targets: ["StrataRecords"]),
        .executable(name: "strata", targets: ["strata"]),
        .executable(name: "strata-bench", targets: ["strata-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // liblz4 from the system (Debian: liblz4-dev).
        .systemLibrary(name: "CLZ4", path: "Sources/CLZ4", providers: [.apt(["liblz4-dev"])]),
        // CRC32C with the SSE4.2 instruction where the CPU has it (see docs/decisions.md).
        .target(name: "CCRC32C", path: "Sources/CCRC32C"),
        .target(
            name: "StrataStorage",
            dependencies: ["CLZ4", "CCRC32C"],
            path: "Sources/StrataStorage"
        ),
        .target(
            name: "StrataRecords",
            dependencies: ["StrataStorage"],
            path: "Sources/StrataRecords"
        ),
        .executableTarget(
            name: "strata",
            dependencies: [
                "StrataStorage", "StrataRecords",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/strata"
        ),
        // The libFuzzer target (README, "Reliability"); without libFuzzer, CFuzzDriver's weak
        // `main` replays input files through it, so a plain build still links.
        .target(name: "CFuzzDriver", path: "Sources/CFuzzDriver"),
        .executableTarget(
            name: "strata-fuzz",
            dependencies: ["StrataStorage", "CFuzzDriver"],
            path: "Sources/strata-fuzz"
        ),
        // Benchmark baselines: the system's SQLite and LMDB.
        .systemLibrary(name: "CSQLite", path: "Benchmarks/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLMDB", path: "Benchmarks/CLMDB", providers: [.apt(["liblmdb-dev"])]),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "StrataStorage", "StrataRecords", "CSQLite", "CLMDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/strata-bench"
        ),
        .testTarget(
            name: "StrataStorageTests",
            dependencies: ["StrataStorage"],
            path: "Tests/StrataStorageTests"
        ),
        .testTarget(
            name: "StrataRecordsTests",
            // SQLite: the differential tests run the same operations on it, with triggers.
            dependencies: ["StrataRecords", "CSQLite"],
            path: "Tests/StrataRecordsTests"
        ),
        // Runs the built tools (`strata crash-test`, `strata fuzz`, the fuzz target's replay,
        // `strata-bench` at a tiny scale).
        .testTarget(
            name: "StrataToolTests",
            dependencies: ["strata", "strata-fuzz", "strata-bench", "StrataRecords"],
            path: "Tests/StrataToolTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
