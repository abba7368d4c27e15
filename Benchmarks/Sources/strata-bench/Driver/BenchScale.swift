import ArgumentParser

/// How big a benchmark run is. Each subcommand maps a scale to its sizes and repeats; an
/// explicit size option (`--count`, `--lists`, `--items`, `--repeat`, …) overrides the scale's
/// figure for that size.
enum BenchScale: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// What `make bench` runs: every workload and engine, sized so `kv`, `records` and
    /// `objects` together finish in a short run (decision 38).
    case `default`
    /// The original sizes (the defaults before scales existed), so earlier figures compare.
    case full
}
