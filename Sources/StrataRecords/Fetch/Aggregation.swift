import Foundation

/// `@count`, `@sum`, `@avg`, `@min` and `@max` over the values of a key path.
///
/// Sums stay exact while they can: integers add as `Int64` (moving to `Decimal` on overflow),
/// integers and decimals add as `Decimal`; any double makes the result a double. `nil`s and
/// non-numbers are skipped by the arithmetic aggregates. `@avg`, `@min` and `@max` of nothing
/// are `nil`; `@sum` of nothing is 0.
enum Aggregation {
    static func apply(_ function: AggregateFunction, to values: KeyPathValues) -> Value {
        let elements: [Value]
        switch values {
        case .one(.null): elements = []  // a nil to-one on the way: no objects
        case .one(let v): elements = [v]
        case .many(let vs): elements = vs
        }
        switch function {
        case .count: return .int(Int64(elements.count))
        case .sum: return Sum(elements).total ?? .int(0)
        case .avg: return Sum(elements).mean ?? .null
        case .min: return extreme(elements, keeping: -1)
        case .max: return extreme(elements, keeping: 1)
        }
    }

    private static func extreme(_ elements: [Value], keeping sign: Int) -> Value {
        var best: Value?
        for v in elements where !v.isNull {
            guard let current = best else { best = v; continue }
            if let c = Value.compare(v, current), c == sign { best = v }
        }
        return best ?? .null
    }

    private struct Sum {
        var integers: Int64 = 0
        var exact: Decimal = 0      // decimals, plus integers that overflowed `integers`
        var doubles: Double = 0
        var count = 0
        var sawDecimal = false      // a decimal element (not just an overflow)
        var sawOverflow = false
        var sawDouble = false

        init(_ elements: [Value]) {
            for v in elements {
                switch v {
                case .int(let i):
                    let (sum, overflow) = integers.addingReportingOverflow(i)
                    if overflow {
                        exact += Decimal(integers) + Decimal(i)
                        integers = 0
                        sawOverflow = true
                    } else {
                        integers = sum
                    }
                case .decimal(let d):
                    exact += d
                    sawDecimal = true
                case .double(let d):
                    doubles += d
                    sawDouble = true
                default:
                    continue
                }
                count += 1
            }
        }

        private var exactTotal: Decimal { exact + Decimal(integers) }

        private var doubleTotal: Double {
            let exactPart = sawDecimal || sawOverflow ? NSDecimalNumber(decimal: exactTotal).doubleValue : Double(integers)
            return exactPart + doubles
        }

        var total: Value? {
            guard count > 0 else { return nil }
            if sawDouble { return .double(doubleTotal) }
            if sawDecimal || sawOverflow { return .decimal(exactTotal) }
            return .int(integers)
        }

        /// Integers average to a double, as in Core Data; decimals keep decimal precision.
        var mean: Value? {
            guard count > 0 else { return nil }
            if sawDouble || !sawDecimal { return .double(doubleTotal / Double(count)) }
            return .decimal(exactTotal / Decimal(count))
        }
    }
}
