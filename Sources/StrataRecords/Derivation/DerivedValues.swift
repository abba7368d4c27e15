import Foundation

/// Where a computed value meets its derived attribute's declared type, and the arithmetic of
/// row-local expressions (`amount * quantity`): every result either fits or is an
/// ``AggregateArithmetic/Overflow``, which the engine reports as a validation error naming
/// entity and attribute. Nothing is silently stored as nil, zero or NaN.
enum DerivedValues {
    typealias Overflow = AggregateArithmetic.Overflow

    /// `v` as a value of `type`: integers within the type's width (a double, from a division,
    /// truncated toward zero like Swift's `/`), integers to the nearest double or exactly to a
    /// decimal, decimals to the nearest double, doubles to their shortest decimal digits.
    static func convert(_ v: StoredValue, to type: AttributeType) throws(Overflow) -> StoredValue {
        switch (v, type) {
        case (.null, _):
            return .null
        case (.int(let i), _) where type.isInteger:
            guard type.integerRange!.contains(i) else { throw Overflow(reason: "the value does not fit \(type.rawValue)") }
            return v
        case (.double(let x), _) where type.isInteger:
            guard let i = Int64(exactly: x.rounded(.towardZero)), type.integerRange!.contains(i) else {
                throw Overflow(reason: "the value does not fit \(type.rawValue)")
            }
            return .int(i)
        case (.int(let i), .double):
            return .double(Double(i))
        case (.int(let i), .decimal):
            return .decimal(Decimal(i))
        case (.double(let x), .double):
            guard x.isFinite else { throw Overflow(reason: "the double result is not finite") }
            return v
        case (.double(let x), .decimal):
            guard let d = ExactConversion.decimal(x) else { throw Overflow(reason: "the double result does not fit decimal") }
            return .decimal(d)
        case (.decimal(let x), .decimal):
            guard !x.isNaN else { throw Overflow(reason: "the decimal result cannot be represented") }
            return v
        case (.decimal(let x), .double):
            guard let d = ExactConversion.nearestDouble(x) else { throw Overflow(reason: "the decimal result does not fit double") }
            return .double(d)
        default:
            guard type.accepts(v) else { throw Overflow(reason: "\(ValueDescription.kind(v)) is not a \(type.rawValue)") }
            return v
        }
    }

    /// `a op b` for the values of a row-local expression: integers exactly (overflow fails;
    /// division gives a double, which an integer attribute truncates), decimals with
    /// Foundation's rounding to 38 digits but never past its range, doubles that stay finite.
    /// `nil` in, `nil` out; division by zero is `nil`.
    static func arithmetic(_ op: DerivedExpression.ArithmeticOperator, _ a: StoredValue, _ b: StoredValue) throws(Overflow) -> StoredValue {
        switch (a, b) {
        case (.null, _), (_, .null):
            return .null
        case (.int(let x), .int(let y)):
            let r: (partialValue: Int64, overflow: Bool)
            switch op {
            case .add: r = x.addingReportingOverflow(y)
            case .subtract: r = x.subtractingReportingOverflow(y)
            case .multiply: r = x.multipliedReportingOverflow(by: y)
            case .divide:
                if y == 0 { return .null }
                // Integer division would lose the fraction; the declared type decides later.
                return .double(AggregateArithmetic.nearestQuotient(x, y))
            }
            if r.overflow { throw Overflow(reason: "integer overflow") }
            return .int(r.partialValue)
        case (.decimal, _), (_, .decimal):
            guard var x = try decimal(a), var y = try decimal(b) else { return .null }
            var r = Decimal()
            let error: NSDecimalNumber.CalculationError
            switch op {
            case .add: error = NSDecimalAdd(&r, &x, &y, .plain)
            case .subtract: error = NSDecimalSubtract(&r, &x, &y, .plain)
            case .multiply: error = NSDecimalMultiply(&r, &x, &y, .plain)
            case .divide:
                if y.isZero { return .null }
                error = NSDecimalDivide(&r, &x, &y, .plain)
            }
            // Rounding to 38 digits is decimal arithmetic; leaving the range is not.
            if error == .overflow || error == .underflow || r.isNaN { throw Overflow(reason: "decimal overflow") }
            return .decimal(r)
        default:
            guard let x = double(a), let y = double(b) else { return .null }
            let r: Double
            switch op {
            case .add: r = x + y
            case .subtract: r = x - y
            case .multiply: r = x * y
            case .divide:
                if y == 0 { return .null }
                r = x / y
            }
            guard r.isFinite else { throw Overflow(reason: "double overflow") }
            return .double(r)
        }
    }

    static func negate(_ v: StoredValue) throws(Overflow) -> StoredValue {
        switch v {
        case .int(let i):
            guard i != .min else { throw Overflow(reason: "integer overflow") }
            return .int(-i)
        case .double(let d): return .double(-d)
        case .decimal(let d): return .decimal(-d)
        default: return .null
        }
    }

    private static func decimal(_ v: StoredValue) throws(Overflow) -> Decimal? {
        switch v {
        case .decimal(let d): return d
        case .int(let i): return Decimal(i)
        case .double(let d):
            guard let x = ExactConversion.decimal(d) else { throw Overflow(reason: "a double operand does not fit decimal") }
            return x
        default: return nil
        }
    }

    private static func double(_ v: StoredValue) -> Double? {
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}
