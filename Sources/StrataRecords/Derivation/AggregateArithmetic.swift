import Foundation
import StrataStorage

/// The arithmetic of aggregates, defined once: the derivation engine (running values moved by
/// deltas at commit), fetch aggregates (`items.amount.@sum > 5`) and `checkRecords` (every
/// value from scratch) all call it, so the three cannot disagree (docs/decisions.md,
/// "Aggregate arithmetic").
///
/// - Integer sums are `Int64`, exact; a sum that leaves `Int64` is an ``Overflow``.
/// - Decimal sums are exact whatever the order of the additions (an exact wide accumulator
///   behind a 64-bit fast path); a total that `Decimal` cannot hold exactly (more than 38–39
///   digits, or beyond its exponent range) is an ``Overflow``.
/// - Double sums are Neumaier-compensated; a total that is not finite is an ``Overflow``. They
///   are the one inexact form: a running sum and a sum from scratch may differ in the last bits.
/// - Averages are the sum (as above) divided by the count, rounded once: integers to the
///   nearest double, decimals by `Decimal` division.
/// - `@min`/`@max` order values as ``StoredValue/compare(_:_:)`` does.
enum AggregateArithmetic {
    /// A result that its type cannot hold: the caller turns it into the error of its context
    /// (a validation error naming entity and attribute at commit, an invalid fetch, a problem
    /// reported by the checker).
    struct Overflow: Error, Equatable {
        var reason: String
    }

    /// How values of a source type are summed.
    enum SumKind: Equatable {
        case integer, decimal, double

        init(_ type: AttributeType) {
            if type.isInteger { self = .integer } else if type == .decimal { self = .decimal } else { self = .double }
        }

        /// The type a running sum of this kind is kept in.
        var type: AttributeType {
            switch self {
            case .integer: return .int64
            case .decimal: return .decimal
            case .double: return .double
            }
        }

        func sameKind(as declared: AttributeType) -> Bool { SumKind(declared) == self }
    }

    // MARK: Integers

    static func add(_ lhs: Int64, _ rhs: Int64) throws(Overflow) -> Int64 {
        let (result, overflow) = lhs.addingReportingOverflow(rhs)
        if overflow { throw Overflow(reason: "the integer sum leaves the 64-bit range") }
        return result
    }

    static func subtract(_ lhs: Int64, _ rhs: Int64) throws(Overflow) -> Int64 {
        let (result, overflow) = lhs.subtractingReportingOverflow(rhs)
        if overflow { throw Overflow(reason: "the integer sum leaves the 64-bit range") }
        return result
    }

    // MARK: Decimals

    /// An exact decimal sum: 64-bit mantissas while they suffice (the common case, far cheaper
    /// than Foundation's addition; decisions 13 and 16), an exact wide accumulator after that.
    /// Only ``total()`` can fail, so the order of the additions never matters.
    struct DecimalSum {
        /// The value the sum started from, until something is added.
        private var start: Decimal?
        /// The running total while 64-bit mantissas suffice: its parts (``DecimalCoding/Parts``,
        /// `high` 0), moved by ``DecimalCoding/fastSum(_:_:subtracting:)-(Parts,Parts,_)``'s
        /// arithmetic without a `Decimal` made per addition (decision 107).
        private var fast: DecimalCoding.Parts?
        private var wide: WideDecimal?

        init(_ start: Decimal = 0) {
            self.start = start
            guard DecimalCoding.layoutIsKnown else { wide = WideDecimal(start); return }
            let parts = DecimalCoding.parts(start)
            if parts.high == 0 { fast = parts } else { wide = WideDecimal(start) }
        }

        mutating func add(_ value: Decimal, subtracting: Bool = false) {
            start = nil
            if let current = fast {
                if let sum = DecimalCoding.fastSum(current, DecimalCoding.parts(value), subtracting: subtracting) {
                    fast = sum
                    return
                }
                // From the parts: a `Decimal` made of them can be NaN near the top of its range.
                wide = WideDecimal(current)
                fast = nil
            }
            wide!.add(WideDecimal(value), subtracting: subtracting)
        }

        func total() throws(Overflow) -> Decimal {
            if let start { return start }
            if let fast { return try WideDecimal.decimal(fast) }
            return try wide!.decimal()
        }
    }

    // MARK: Doubles

    /// A Neumaier-compensated double sum: `sum` and `compensation` are what a running sum keeps.
    struct CompensatedSum {
        var sum = 0.0
        var compensation = 0.0

        mutating func add(_ value: Double) {
            let next = sum + value
            if abs(sum) >= abs(value) {
                compensation += (sum - next) + value
            } else {
                compensation += (value - next) + sum
            }
            sum = next
        }

        func total() throws(Overflow) -> Double {
            let result = sum + compensation
            guard result.isFinite, sum.isFinite, compensation.isFinite else {
                throw Overflow(reason: "the double sum is not finite")
            }
            return result
        }
    }

    // MARK: Stored operands

    /// A stored `@count`, in whatever numeric type it is declared (a count is a whole number
    /// far below 2^53, so a double or decimal holds it exactly); `nil` is 0.
    static func countValue(_ value: StoredValue) throws -> Int64 {
        switch value {
        case .double(let double): if let integer = Int64(exactly: double) { return integer }
        case .decimal(let decimal): if let integer = ExactConversion.integer(decimal) { return integer }
        default: return try integer(value)
        }
        throw StrataError.corrupt("a stored count is not a whole number", offset: nil)
    }

    static func integer(_ value: StoredValue) throws -> Int64 {
        switch value {
        case .int(let integer): return integer
        case .null: return 0
        default: throw StrataError.corrupt("a stored integer operand is \(ValueDescription.kind(value))", offset: nil)
        }
    }

    static func decimal(_ value: StoredValue) throws -> Decimal {
        switch value {
        case .decimal(let decimal): return decimal
        case .int(let integer): return Decimal(integer)
        case .null: return 0
        default: throw StrataError.corrupt("a stored decimal operand is \(ValueDescription.kind(value))", offset: nil)
        }
    }

    static func double(_ value: StoredValue) throws -> Double {
        switch value {
        case .double(let double): return double
        case .int(let integer): return Double(integer)
        case .null: return 0
        default: throw StrataError.corrupt("a stored double operand is \(ValueDescription.kind(value))", offset: nil)
        }
    }

    // MARK: Averages

    /// The mean of a sum of `count` values, rounded once: an integer sum to the nearest
    /// double (or exactly divided as a decimal when `type` is decimal), a decimal sum by
    /// `Decimal` division, a double sum by double division. `nil` for no values.
    static func mean(sum: StoredValue, count: Int64, as type: AttributeType) throws(Overflow) -> StoredValue {
        guard count > 0 else { return .null }
        switch sum {
        case .int(let total):
            if type == .decimal { return try decimalMean(Decimal(total), count) }
            return try DerivedValues.convert(.double(nearestQuotient(total, count)), to: type)
        case .decimal(let total):
            return try DerivedValues.convert(try decimalMean(total, count), to: type)
        case .double(let total):
            return try DerivedValues.convert(.double(total / Double(count)), to: type)
        default:
            return .null
        }
    }

    private static func decimalMean(_ sum: Decimal, _ count: Int64) throws(Overflow) -> StoredValue {
        let quotient = sum / Decimal(count)
        guard !quotient.isNaN else { throw Overflow(reason: "the decimal average cannot be represented") }
        return .decimal(quotient)
    }

    /// `dividend / divisor` rounded once to the nearest double (ties to even). Both exact as
    /// doubles: one IEEE division. Otherwise a 128-bit quotient with at least 56 significant bits
    /// and a sticky bit for the remainder, converted once.
    static func nearestQuotient(_ dividend: Int64, _ divisor: Int64) -> Double {
        let dividendMagnitude = dividend.magnitude, divisorMagnitude = divisor.magnitude
        if dividendMagnitude < 1 << 53 && divisorMagnitude < 1 << 53 { return Double(dividend) / Double(divisor) }
        let width = 64 - dividendMagnitude.leadingZeroBitCount
        let shift = 120 - width                 // the dividend's top bit at 119: the quotient has ≥ 56 bits
        let numerator = UInt128(dividendMagnitude) << shift
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: UInt128(divisorMagnitude))
        let rounded = Double(quotient | (remainder == 0 ? 0 : 1))
        let magnitude = Double(sign: .plus, exponent: -shift, significand: rounded)
        return (dividend < 0) != (divisor < 0) ? -magnitude : magnitude
    }

    // MARK: From scratch (fetch aggregates, the checker)

    /// The sum of `values` (nils and non-numbers skipped): integers stay `Int64` unless a
    /// decimal or double is among them, decimals stay decimal unless a double is. `nil` when
    /// there is no number at all.
    static func sum(_ values: [StoredValue]) throws(Overflow) -> (total: StoredValue, count: Int64)? {
        var kind: SumKind?
        for value in values {
            switch value {
            case .int: if kind == nil { kind = .integer }
            case .decimal: if kind != .double { kind = .decimal }
            case .double: kind = .double
            default: continue
            }
        }
        guard let kind else { return nil }
        var count: Int64 = 0
        switch kind {
        case .integer:
            var total: Int64 = 0
            for case .int(let integer) in values { total = try add(total, integer); count += 1 }
            return (.int(total), count)
        case .decimal:
            var total = DecimalSum()
            for value in values {
                switch value {
                case .int(let integer): total.add(Decimal(integer))
                case .decimal(let decimal): total.add(decimal)
                default: continue
                }
                count += 1
            }
            return (.decimal(try total.total()), count)
        case .double:
            var total = CompensatedSum()
            for value in values {
                switch value {
                case .int(let integer): total.add(Double(integer))
                case .decimal(let decimal): total.add(ExactConversion.nearestDouble(decimal) ?? .nan)
                case .double(let double): total.add(double)
                default: continue
                }
                count += 1
            }
            return (.double(try total.total()), count)
        }
    }

    /// An aggregate over values, from scratch, in the values' own kind: `@count` of the values,
    /// `@sum` (0 of nothing), `@avg` (nil of nothing; integers average to a double), `@min`, `@max`.
    static func aggregate(_ function: AggregateFunction, of values: [StoredValue]) throws(Overflow) -> StoredValue {
        switch function {
        case .count:
            return .int(Int64(values.count))
        case .sum:
            return try sum(values)?.total ?? .int(0)
        case .avg:
            guard let (total, count) = try sum(values) else { return .null }
            switch total {
            case .decimal: return try mean(sum: total, count: count, as: .decimal)
            default: return try mean(sum: total, count: count, as: .double)
            }
        case .min:
            return extreme(values, max: false)
        case .max:
            return extreme(values, max: true)
        }
    }

    /// The least or greatest non-nil value.
    static func extreme(_ values: [StoredValue], max: Bool) -> StoredValue {
        var best: StoredValue?
        for value in values where !value.isNull {
            guard let current = best else { best = value; continue }
            if let order = StoredValue.compare(value, current), max ? order > 0 : order < 0 { best = value }
        }
        return best ?? .null
    }
}
