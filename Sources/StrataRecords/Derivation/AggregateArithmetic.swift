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

    static func add(_ a: Int64, _ b: Int64) throws(Overflow) -> Int64 {
        let (r, o) = a.addingReportingOverflow(b)
        if o { throw Overflow(reason: "the integer sum leaves the 64-bit range") }
        return r
    }

    static func subtract(_ a: Int64, _ b: Int64) throws(Overflow) -> Int64 {
        let (r, o) = a.subtractingReportingOverflow(b)
        if o { throw Overflow(reason: "the integer sum leaves the 64-bit range") }
        return r
    }

    // MARK: Decimals

    /// An exact decimal sum: 64-bit mantissas while they suffice (the common case, ~15× cheaper
    /// than Foundation's addition), an exact wide accumulator after that. Only ``total()`` can
    /// fail, so the order of the additions never matters.
    struct DecimalSum {
        private var fast: Decimal
        private var wide: WideDecimal?

        init(_ start: Decimal = 0) { fast = start }

        mutating func add(_ x: Decimal, subtracting: Bool = false) {
            if wide == nil, let s = DecimalCoding.fastSum(fast, x, subtracting: subtracting) {
                fast = s
                return
            }
            if wide == nil { wide = WideDecimal(fast) }
            wide!.add(WideDecimal(x), subtracting: subtracting)
        }

        func total() throws(Overflow) -> Decimal {
            guard let wide else { return fast }
            return try wide.decimal()
        }
    }

    // MARK: Doubles

    /// A Neumaier-compensated double sum: `sum` and `compensation` are what a running sum keeps.
    struct CompensatedSum {
        var sum = 0.0
        var compensation = 0.0

        mutating func add(_ x: Double) {
            let t = sum + x
            if abs(sum) >= abs(x) { compensation += (sum - t) + x } else { compensation += (x - t) + sum }
            sum = t
        }

        func total() throws(Overflow) -> Double {
            let t = sum + compensation
            guard t.isFinite, sum.isFinite, compensation.isFinite else { throw Overflow(reason: "the double sum is not finite") }
            return t
        }
    }

    // MARK: Stored operands

    /// A stored `@count`, in whatever numeric type it is declared (a count is a whole number
    /// far below 2^53, so a double or decimal holds it exactly); `nil` is 0.
    static func countValue(_ v: StoredValue) throws -> Int64 {
        switch v {
        case .double(let x): if let i = Int64(exactly: x) { return i }
        case .decimal(let x): if let i = ExactConversion.integer(x) { return i }
        default: return try integer(v)
        }
        throw StrataError.corrupt("a stored count is not a whole number", offset: nil)
    }

    static func integer(_ v: StoredValue) throws -> Int64 {
        switch v {
        case .int(let i): return i
        case .null: return 0
        default: throw StrataError.corrupt("a stored integer operand is \(ValueDescription.kind(v))", offset: nil)
        }
    }

    static func decimal(_ v: StoredValue) throws -> Decimal {
        switch v {
        case .decimal(let d): return d
        case .int(let i): return Decimal(i)
        case .null: return 0
        default: throw StrataError.corrupt("a stored decimal operand is \(ValueDescription.kind(v))", offset: nil)
        }
    }

    static func double(_ v: StoredValue) throws -> Double {
        switch v {
        case .double(let d): return d
        case .int(let i): return Double(i)
        case .null: return 0
        default: throw StrataError.corrupt("a stored double operand is \(ValueDescription.kind(v))", offset: nil)
        }
    }

    // MARK: Averages

    /// The mean of a sum of `count` values, rounded once: an integer sum to the nearest
    /// double (or exactly divided as a decimal when `type` is decimal), a decimal sum by
    /// `Decimal` division, a double sum by double division. `nil` for no values.
    static func mean(sum: StoredValue, count: Int64, as type: AttributeType) throws(Overflow) -> StoredValue {
        guard count > 0 else { return .null }
        switch sum {
        case .int(let s):
            if type == .decimal { return try decimalMean(Decimal(s), count) }
            return try DerivedValues.convert(.double(nearestQuotient(s, count)), to: type)
        case .decimal(let s):
            return try DerivedValues.convert(try decimalMean(s, count), to: type)
        case .double(let s):
            return try DerivedValues.convert(.double(s / Double(count)), to: type)
        default:
            return .null
        }
    }

    private static func decimalMean(_ s: Decimal, _ count: Int64) throws(Overflow) -> StoredValue {
        let m = s / Decimal(count)
        guard !m.isNaN else { throw Overflow(reason: "the decimal average cannot be represented") }
        return .decimal(m)
    }

    /// `s / n` rounded once to the nearest double (ties to even). Both exact as doubles: one
    /// IEEE division. Otherwise a 128-bit quotient with at least 56 significant bits and a
    /// sticky bit for the remainder, converted once.
    static func nearestQuotient(_ s: Int64, _ n: Int64) -> Double {
        let a = s.magnitude, b = n.magnitude
        if a < 1 << 53 && b < 1 << 53 { return Double(s) / Double(n) }
        let width = 64 - a.leadingZeroBitCount
        let shift = 120 - width                 // a's top bit at 119: the quotient has ≥ 56 bits
        let numerator = UInt128(a) << shift
        let (q, r) = numerator.quotientAndRemainder(dividingBy: UInt128(b))
        let rounded = Double(q | (r == 0 ? 0 : 1))
        let magnitude = Double(sign: .plus, exponent: -shift, significand: rounded)
        return (s < 0) != (n < 0) ? -magnitude : magnitude
    }

    // MARK: From scratch (fetch aggregates, the checker)

    /// The sum of `values` (nils and non-numbers skipped): integers stay `Int64` unless a
    /// decimal or double is among them, decimals stay decimal unless a double is. `nil` when
    /// there is no number at all.
    static func sum(_ values: [StoredValue]) throws(Overflow) -> (total: StoredValue, count: Int64)? {
        var kind: SumKind?
        for v in values {
            switch v {
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
            var s: Int64 = 0
            for case .int(let i) in values { s = try add(s, i); count += 1 }
            return (.int(s), count)
        case .decimal:
            var s = DecimalSum()
            for v in values {
                switch v {
                case .int(let i): s.add(Decimal(i))
                case .decimal(let d): s.add(d)
                default: continue
                }
                count += 1
            }
            return (.decimal(try s.total()), count)
        case .double:
            var s = CompensatedSum()
            for v in values {
                switch v {
                case .int(let i): s.add(Double(i))
                case .decimal(let d): s.add(ExactConversion.nearestDouble(d) ?? .nan)
                case .double(let d): s.add(d)
                default: continue
                }
                count += 1
            }
            return (.double(try s.total()), count)
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
        for v in values where !v.isNull {
            guard let current = best else { best = v; continue }
            if let c = StoredValue.compare(v, current), max ? c > 0 : c < 0 { best = v }
        }
        return best ?? .null
    }
}
