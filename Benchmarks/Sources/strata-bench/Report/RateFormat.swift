import Foundation

/// Rates as the benchmark prints them: three significant digits in the largest unit that keeps
/// the figure at least 1, so a slow engine reads `850 ops/s` or `4.20 ops/s`, never `0.0 K ops/s`.
enum RateFormat {
    /// `850 ops/s`, `1.23 K ops/s`, `12.3 K ops/s`, `1.20 M ops/s`; `-` when there is no rate.
    static func opsPerSecond(_ rate: Double) -> String {
        guard let (figure, unit) = scaled(rate) else { return "-" }
        return unit.isEmpty ? "\(figure) ops/s" : "\(figure) \(unit) ops/s"
    }

    /// The table's compact form of the same figure: `850`, `12.3K`, `1.20M`.
    static func compact(_ rate: Double) -> String {
        guard let (figure, unit) = scaled(rate) else { return "-" }
        return figure + unit
    }

    /// A count with thousands separators (`12,345`), for progress lines.
    static func count(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// A duration as people say it: `0.5 s`, `42 s`, `3 min 05 s`, `1 h 02 min`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        if seconds < 9.95 { return String(format: "%.2g s", seconds) }
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s) s" }
        if s < 3600 { return String(format: "%d min %02d s", s / 60, s % 60) }
        return String(format: "%d h %02d min", s / 3600, (s % 3600) / 60)
    }

    /// The figure with three significant digits and its unit (`""`, `K`, `M`, `G`), or nil
    /// for a rate that is not a finite non-negative number.
    private static func scaled(_ rate: Double) -> (String, String)? {
        guard rate.isFinite, rate >= 0 else { return nil }
        var value = rate
        var unit = ""
        for next in ["K", "M", "G"] where value >= 999.5 {
            // 999.5 rounds to "1000" in the unit below: show it as 1.00 of the next unit instead.
            value /= 1000
            unit = next
        }
        let figure: String
        switch value {
        case 0: figure = "0"
        // Below one a second (a quadratic baseline on a big list): two significant digits.
        case ..<0.995: figure = String(format: "%.2g", value)
        case ..<9.995: figure = String(format: "%.2f", value)
        case ..<99.95: figure = String(format: "%.1f", value)
        default: figure = String(format: "%.0f", value)
        }
        return (figure, unit)
    }
}
