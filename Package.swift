// swift-tools-version:6.0
import PackageDescription

/// The suites whose time is spent in the code they test, not in their own, compile unoptimized
/// even in `make test`'s release build: the optimizer's work on their code took about 90 s of
/// every CI run and bought nothing (decision 112). Test targets are built only for this package
/// itself, so a dependent never sees the flag; the libraries and tools stay optimized, and the
/// storage and record suites, whose oracles and models do real work, stay optimized too.
let testCodeUnoptimized: [SwiftSetting] = [.unsafeFlags(["-Onone"])]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataStorage", targets: ["StrataStorage"]),
        .library(name: "StrataRecords", targets: ["StrataRecords"]),
        .library(name: "Strata", targets: ["Strata"]),
        // Replication to PostgreSQL, apart: a user who does not replicate builds none of it and
        // needs no libpq.
        .library(name: "StrataPostgres", targets: ["StrataPostgres"]),
        // The tools (`strata`, `strata-harness`, `strata-examples`) are executable targets, not
        // products: `swift build --product strata` builds one here, and a dependent resolves none
        // of what they use (swift-argument-parser; decision 76).
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `swift package generate-documentation` (`make docs`): a command plugin, no target uses it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // liblz4 from the system (Debian: liblz4-dev).
        .systemLibrary(name: "CLZ4", path: "Sources/CLZ4", providers: [.apt(["liblz4-dev"])]),
        // CRC32C with the SSE4.2 instruction where the CPU has it (see docs/decisions.md).
        .target(name: "CCRC32C", path: "Sources/CCRC32C"),
        // File hints Swift's Glibc module leaves out (sync_file_range needs _GNU_SOURCE).
        .target(name: "CFileHints", path: "Sources/CFileHints"),
        .target(
            name: "StrataStorage",
            dependencies: ["CLZ4", "CCRC32C", "CFileHints"],
            path: "Sources/StrataStorage"
        ),
        .target(
            name: "StrataRecords",
            dependencies: ["StrataStorage"],
            path: "Sources/StrataRecords"
        ),
        // The object layer: model classes, contexts, managed objects.
        .target(
            name: "Strata",
            dependencies: ["StrataRecords", "StrataStorage"],
            path: "Sources/Strata"
        ),
        // libpq, PostgreSQL's client library, from the system (Debian: libpq-dev; decision 76).
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        // Replication of a record store to PostgreSQL (decision 62).
        .target(
            name: "StrataPostgres",
            dependencies: ["StrataRecords", "StrataStorage", "CLibPQ"],
            path: "Sources/StrataPostgres"
        ),
        // Test support shared by the tools and the test suites (the simulated file system, seeded
        // randomness, the crash workloads, the TodoList model, and `Reference/`: a codec of the
        // file format written from FORMAT.md alone, which imports nothing of the engine's): a
        // target, not a product, at `package` access, so it stays out of what users link and see.
        // The benchmark package cannot see it, and compiles SplitMix64.swift itself through a
        // link (decision 53).
        .target(
            name: "StrataTesting",
            dependencies: ["StrataStorage", "StrataRecords"],
            path: "Sources/StrataTesting"
        ),
        // The operator tool: info, check, compact, dump, backup, history, replicate.
        .executableTarget(
            name: "strata",
            dependencies: [
                "StrataStorage", "StrataRecords", "StrataPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/strata"
        ),
        // The crash and fuzz harness (docs/reliability.md): crash-test, fuzz, their worker
        // processes and the live-reader test's writer. Not a product: nothing a user installs.
        .executableTarget(
            name: "strata-harness",
            dependencies: [
                "StrataStorage", "StrataRecords", "StrataTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/strata-harness"
        ),
        // The seeds' scenarios as runnable examples of the object layer (README, "Properties
        // and observation").
        .executableTarget(
            name: "strata-examples",
            dependencies: ["Strata", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/strata-examples"
        ),
        // The libFuzzer target (docs/reliability.md); without libFuzzer, CFuzzDriver's weak
        // `main` replays input files through it, so a plain build still links.
        .target(name: "CFuzzDriver", path: "Sources/CFuzzDriver"),
        .executableTarget(
            name: "strata-fuzz",
            dependencies: ["StrataStorage", "StrataTesting", "CFuzzDriver"],
            path: "Sources/strata-fuzz"
        ),
        // The record layer's libFuzzer target: inputs are record stores' trees, written by the
        // engine (valid checksums) and opened as record stores.
        .executableTarget(
            name: "strata-fuzz-records",
            dependencies: ["StrataStorage", "StrataRecords", "StrataTesting", "CFuzzDriver"],
            path: "Sources/strata-fuzz-records"
        ),
        // The system's SQLite, for the record layer's differential tests only. Under Tests/, beside
        // the one target that imports it, so no reader takes it for part of what users link; the
        // benchmark package (Benchmarks/) declares its own, with LMDB and GRDB.
        .systemLibrary(name: "CSQLite", path: "Tests/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .testTarget(
            name: "StrataStorageTests",
            dependencies: ["StrataStorage", "StrataTesting"],
            path: "Tests/StrataStorageTests"
        ),
        .testTarget(
            name: "StrataRecordsTests",
            // SQLite: the differential tests run the same operations on it, with triggers.
            dependencies: ["StrataRecords", "StrataTesting", "CSQLite"],
            path: "Tests/StrataRecordsTests"
        ),
        // Needs a PostgreSQL server: the suite starts a throwaway cluster (Debian's postgresql).
        .testTarget(
            name: "StrataPostgresTests",
            dependencies: ["StrataPostgres", "StrataRecords", "StrataTesting"],
            path: "Tests/StrataPostgresTests",
            swiftSettings: testCodeUnoptimized
        ),
        .testTarget(
            name: "StrataObjectTests",
            dependencies: ["Strata", "StrataTesting"],
            path: "Tests/StrataObjectTests",
            swiftSettings: testCodeUnoptimized
        ),
        // Runs the built tools (`strata`, `strata-harness crash-test` and `fuzz`, the fuzz targets'
        // replay, `strata-examples`; `strata-bench`'s tests are in Benchmarks/). The fuzz targets
        // are not dependencies: SwiftPM links an executable dependency's code into the test
        // bundle, and both define `LLVMFuzzerTestOneInput`; `swift build` builds them anyway.
        .testTarget(
            name: "StrataToolTests",
            dependencies: ["strata", "strata-harness", "strata-examples", "StrataRecords", "StrataTesting"],
            path: "Tests/StrataToolTests",
            swiftSettings: testCodeUnoptimized
        ),
    ],
    swiftLanguageModes: [.v6]
)
