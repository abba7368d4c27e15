// swift-tools-version:6.0
import PackageDescription

// strata-bench, the side-by-side benchmarks (README.md here), as a package of its own: what it
// compares Strata with (GRDB, SQLite, LMDB) stays out of the package users depend on, whose
// `swift package dump-package` names no benchmark dependency. `make bench` builds it;
// `make test` builds and runs its tests too.
let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "strata-bench", targets: ["strata-bench"]),
    ],
    dependencies: [
        // Strata itself, from this checkout. Named, so the products below resolve whatever the
        // checkout's folder is called (a path dependency's identity is its folder's name).
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The objects benchmark's baseline.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // Baselines from the system: SQLite (`kv`, `records`; GRDB links it too) and LMDB (`kv`).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLMDB", providers: [.apt(["liblmdb-dev"])]),
        // glibc's <malloc.h> (not in Swift's Glibc module), for the objects benchmark's memory figures.
        .systemLibrary(name: "CMalloc"),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "CSQLite", "CLMDB", "CMalloc",
                .product(name: "StrataStorage", package: "Strata"),
                .product(name: "StrataRecords", package: "Strata"),
                .product(name: "Strata", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The report's arithmetic and formats, and every benchmark run at a tiny scale.
        .testTarget(name: "StrataBenchTests", dependencies: ["strata-bench"]),
    ],
    swiftLanguageModes: [.v6]
)
