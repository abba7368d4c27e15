import Testing
@testable import strata_bench

/// The rates and progress lines the benchmark prints: a slow engine's rate reads as a number
/// of operations a second, never `0.0 K ops/s`.
@Suite struct BenchToolRateFormatTests {
    @Test func ratesUseTheUnitThatKeepsThreeDigits() {
        #expect(RateFormat.opsPerSecond(850) == "850 ops/s")
        #expect(RateFormat.opsPerSecond(42) == "42.0 ops/s")
        #expect(RateFormat.opsPerSecond(4.2) == "4.20 ops/s")
        #expect(RateFormat.opsPerSecond(0.35) == "0.35 ops/s")
        #expect(RateFormat.opsPerSecond(0) == "0 ops/s")
        #expect(RateFormat.opsPerSecond(1_234) == "1.23 K ops/s")
        #expect(RateFormat.opsPerSecond(12_345) == "12.3 K ops/s")
        #expect(RateFormat.opsPerSecond(123_456) == "123 K ops/s")
        #expect(RateFormat.opsPerSecond(1_234_567) == "1.23 M ops/s")
        #expect(RateFormat.opsPerSecond(25_000_000) == "25.0 M ops/s")
        // 999.7 would round to "1000": it is 1.00 of the next unit.
        #expect(RateFormat.opsPerSecond(999.7) == "1.00 K ops/s")
        #expect(RateFormat.opsPerSecond(999_999) == "1.00 M ops/s")
        #expect(RateFormat.opsPerSecond(.nan) == "-")
        #expect(RateFormat.opsPerSecond(.infinity) == "-")
        #expect(RateFormat.compact(850) == "850")
        #expect(RateFormat.compact(12_345) == "12.3K")
        #expect(RateFormat.compact(1_200_000) == "1.20M")
    }

    /// Over twelve decades, no rate prints as zero of a unit, and every figure is below 1000.
    @Test func noRatePrintsAsZeroOfAUnit() {
        var rate = 0.01
        while rate < 1e10 {
            let text = RateFormat.opsPerSecond(rate)
            #expect(!text.hasPrefix("0.0 ") && !text.contains(" 0.0") && !text.hasPrefix("0 "), "\(rate): \(text)")
            let figure = Double(text.split(separator: " ")[0])
            #expect(figure != nil && figure! > 0 && figure! < 1000, "\(rate): \(text)")
            rate *= 1.37
        }
    }

    @Test func countsAndDurations() {
        #expect(RateFormat.count(0) == "0")
        #expect(RateFormat.count(999) == "999")
        #expect(RateFormat.count(1_000) == "1,000")
        #expect(RateFormat.count(1_234_567) == "1,234,567")
        #expect(RateFormat.duration(0.5) == "0.5 s")
        #expect(RateFormat.duration(42) == "42 s")
        #expect(RateFormat.duration(185) == "3 min 05 s")
        #expect(RateFormat.duration(3_720) == "1 h 02 min")
    }

    /// A progress line says what is done, how fast, and how long is left.
    @Test func progressLines() {
        let counted = ProgressMeter.line("insert_list1000 strata", done: 3_200, total: 10_000, window: nil, elapsed: 4)
        #expect(counted == "  … insert_list1000 strata: 3,200 of 10,000 ops (32%), 800 ops/s, ~8.5 s left", "\(counted)")
        let windowed = ProgressMeter.line("insert_list100000 sqlite-recount", done: 300, total: nil, window: 30, elapsed: 12)
        #expect(windowed == "  … insert_list100000 sqlite-recount: 300 ops in 12 s of a 30 s window, 25.0 ops/s, ~18 s left",
                "\(windowed)")
        let slow = ProgressMeter.line("fillsync sqlite", done: 7, total: 10_000, window: nil, elapsed: 20)
        #expect(slow.contains("0.35 ops/s") && !slow.contains("0.0 K"), "\(slow)")
        // A workload that slows down (recount on growing lists): the estimate follows the last interval's pace.
        let slowing = ProgressMeter.line("bulkinsert sqlite-recount", done: 5_000, total: 10_000, window: nil, elapsed: 10,
                                         recentRate: 250)
        #expect(slowing.hasSuffix("5,000 of 10,000 ops (50%), 500 ops/s, ~20 s left"), "\(slowing)")
    }
}
