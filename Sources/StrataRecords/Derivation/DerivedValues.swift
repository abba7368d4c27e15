import Foundation

/// Where a computed value meets its derived attribute's declared type, and the arithmetic of
/// row-local expressions (`amount * quantity`): every result either fits or is an
/// ``AggregateArithmetic/Overflow``, which the engine reports as a validation error naming
/// entity and attribute. Nothing is silently stored as nil, zero or NaN.
enum DerivedValues {
    typealias Overflow = AggregateArithmetic.Overflow

    /// `value` as a value of `type`: integers within the type's width (a double, from a division,
    /// truncated toward zero like Swift's `/`), integers to the nearest double or exactly to a
    /// decimal, decimals to the nearest double, doubles to their shortest decimal digits.
    static func convert(_ value: StoredValue, to type: AttributeType) throws(Overflow) -> StoredValue {
        switch (value, type) {
        case (.null, _):
            return .null
        case (.int(let integer), _) where type.isInteger:
            guard type.integerRange!.contains(integer) else {
                throw Overflow(reason: "the value does not fit \(type.rawValue)")
            }
            return value
        case (.double(let double), _) where type.isInteger:
            guard let integer = Int64(exactly: double.rounded(.towardZero)), type.integerRange!.contains(integer) else {
                throw Overflow(reason: "the value does not fit \(type.rawValue)")
            }
            return .int(integer)
        case (.int(let integer), .double):
            return .double(Double(integer))
        case (.int(let integer), .decimal):
            return .decimal(Decimal(integer))
        case (.double(let double), .double):
            guard double.isFinite else { throw Overflow(reason: "the double result is not finite") }
            return value
        case (.double(let double), .decimal):
            guard let converted = ExactConversion.decimal(double) else {
                throw Overflow(reason: "the double result does not fit decimal")
            }
            return .decimal(converted)
        case (.decimal(let decimal), .decimal):
            guard !decimal.isNaN else { throw Overflow(reason: "the decimal result cannot be represented") }
            return value
        case (.decimal(let decimal), .double):
            guard let converted = ExactConversion.nearestDouble(decimal) else {
                throw Overflow(reason: "the decimal result does not fit double")
            }
            return .double(converted)
        default:
            guard type.accepts(value) else {
                throw Overflow(reason: "\(ValueDescription.kind(value)) is not a \(type.rawValue)")
            }
            return value
        }
    }

    /// `lhs op rhs` for the values of a row-local expression: integers exactly (overflow fails;
    /// division gives a double, which an integer attribute truncates), decimals with
    /// Foundation's rounding to 38 digits but never past its range, doubles that stay finite.
    /// `nil` in, `nil` out; division by zero is `nil`.
    static func arithmetic(_ op: DerivedExpression.ArithmeticOperator, _ lhs: StoredValue,
                           _ rhs: StoredValue) throws(Overflow) -> StoredValue {
        switch (lhs, rhs) {
        case (.null, _), (_, .null):
            return .null
        case (.int(let left), .int(let right)):
            let result: (partialValue: Int64, overflow: Bool)
            switch op {
            case .add: result = left.addingReportingOverflow(right)
            case .subtract: result = left.subtractingReportingOverflow(right)
            case .multiply: result = left.multipliedReportingOverflow(by: right)
            case .divide:
                if right == 0 { return .null }
                // Integer division would lose the fraction; the declared type decides later.
                return .double(AggregateArithmetic.nearestQuotient(left, right))
            }
            if result.overflow { throw Overflow(reason: "integer overflow") }
            return .int(result.partialValue)
        case (.decimal, _), (_, .decimal):
            guard var left = try decimal(lhs), var right = try decimal(rhs) else { return .null }
            var result = Decimal()
            let error: NSDecimalNumber.CalculationError
            switch op {
            case .add: error = NSDecimalAdd(&result, &left, &right, .plain)
            case .subtract: error = NSDecimalSubtract(&result, &left, &right, .plain)
            case .multiply: error = NSDecimalMultiply(&result, &left, &right, .plain)
            case .divide:
                if right.isZero { return .null }
                error = NSDecimalDivide(&result, &left, &right, .plain)
            }
            // Rounding to 38 digits is decimal arithmetic; leaving the range is not.
            if error == .overflow || error == .underflow || result.isNaN { throw Overflow(reason: "decimal overflow") }
            return .decimal(result)
        default:
            guard let left = double(lhs), let right = double(rhs) else { return .null }
            let result: Double
            switch op {
            case .add: result = left + right
            case .subtract: result = left - right
            case .multiply: result = left * right
            case .divide:
                if right == 0 { return .null }
                result = left / right
            }
            guard result.isFinite else { throw Overflow(reason: "double overflow") }
            return .double(result)
        }
    }

    static func negate(_ value: StoredValue) throws(Overflow) -> StoredValue {
        switch value {
        case .int(let integer):
            guard integer != .min else { throw Overflow(reason: "integer overflow") }
            return .int(-integer)
        case .double(let double): return .double(-double)
        case .decimal(let decimal): return .decimal(-decimal)
        default: return .null
        }
    }

    private static func decimal(_ value: StoredValue) throws(Overflow) -> Decimal? {
        switch value {
        case .decimal(let decimal): return decimal
        case .int(let integer): return Decimal(integer)
        case .double(let double):
            guard let converted = ExactConversion.decimal(double) else {
                throw Overflow(reason: "a double operand does not fit decimal")
            }
            return converted
        default: return nil
        }
    }

    private static func double(_ value: StoredValue) -> Double? {
        switch value {
        case .int(let integer): return Double(integer)
        case .double(let double): return double
        default: return nil
        }
    }
}
