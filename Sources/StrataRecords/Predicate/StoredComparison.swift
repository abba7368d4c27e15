import Foundation

/// A comparison of one stored field with a constant, decided on the field's bytes as the row
/// holds them: no ``StoredValue`` is built and no decimal becomes a Foundation `Decimal`
/// (decision 89). A scan with `amount < 100.00` asks it once per row.
///
/// It is built only where its answer is the general path's (``CompiledComparison``'s test of
/// ``ValueSemantics``): an order or equality operator; an int or decimal field against an int
/// or decimal constant (numbers compare by value, exactly); a double against a double, a
/// date against a date, a bool against a bool. A row it cannot decide cheaply (a decimal
/// mantissa beyond 64 bits, a decimal NaN, bytes a valid row never holds) goes to the general
/// path, which decodes the value and throws where decoding does.
struct StoredComparison: Sendable {
    /// A number as sign, power of ten and magnitude (``DecimalCoding/Number``).
    typealias Number = DecimalCoding.Number

    private enum Constant: Sendable {
        case number(Number)
        /// A double's value, or a date's seconds since 2001-01-01: never NaN.
        case double(Double)
        case bool(Bool)
    }

    /// What the stored bytes say.
    private enum Outcome {
        case ordered(Int)
        /// `nil` or NaN: equal to nothing, ordered with nothing.
        case unordered
        /// Left to the general path.
        case undecided
    }

    /// The field's index in the row.
    let field: Int
    private let type: AttributeType
    private let op: ComparisonOperator
    private let negated: Bool
    private let constant: Constant

    /// The comparison of field `field` (of `type`) with `constant`, or nil when the general path
    /// must decide it (another operator or quantifier, kinds this does not pair).
    init?(field: Int, type: AttributeType, op: ComparisonOperator, quantifier: Quantifier, constant: StoredValue) {
        switch op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: break
        default: return nil
        }
        switch (type, constant) {
        case (.int16, .int(let value)), (.int32, .int(let value)), (.int64, .int(let value)),
             (.decimal, .int(let value)):
            self.constant = .number(Number(value))
        case (.int16, .decimal(let value)), (.int32, .decimal(let value)), (.int64, .decimal(let value)),
             (.decimal, .decimal(let value)):
            guard !value.isNaN else { return nil }
            let parts = DecimalCoding.parts(value)
            guard parts.high == 0 else { return nil }
            self.constant = .number(Number(negative: parts.negative, exponent: parts.exponent, magnitude: parts.low))
        case (.double, .double(let value)):
            guard !value.isNaN else { return nil }
            self.constant = .double(value)
        case (.date, .date(let value)):
            guard !value.timeIntervalSinceReferenceDate.isNaN else { return nil }
            self.constant = .double(value.timeIntervalSinceReferenceDate)
        case (.bool, .bool(let value)):
            self.constant = .bool(value)
        default:
            return nil
        }
        self.field = field
        self.type = type
        self.op = op
        // A single value is a collection of one: NONE is the negation, ANY and ALL the test.
        negated = quantifier == .none
    }

    /// The comparison's answer for a row whose field holds `stored` (nil: no value), or nil
    /// when the general path decides.
    @inline(__always)
    func evaluate(_ stored: UnsafeRawBufferPointer?) -> Bool? {
        let result: Bool
        switch outcome(stored) {
        case .undecided: return nil
        case .unordered: result = op == .notEqual
        case .ordered(let order):
            switch op {
            case .equal: result = order == 0
            case .notEqual: result = order != 0
            case .less: result = order < 0
            case .lessOrEqual: result = order <= 0
            case .greater: result = order > 0
            case .greaterOrEqual: result = order >= 0
            default: return nil
            }
        }
        return negated ? !result : result
    }

    private func outcome(_ stored: UnsafeRawBufferPointer?) -> Outcome {
        guard let stored else { return .unordered }
        var reader = RowCodec.Reader(bytes: stored)
        switch (type, constant) {
        case (.int16, .number(let right)), (.int32, .number(let right)), (.int64, .number(let right)):
            guard let zigzag = try? reader.varint() else { return .undecided }
            let value = Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
            return .ordered(Number.order(Number(value), right))
        case (.decimal, .number(let right)):
            // Sign byte, exponent byte, mantissa length, mantissa bytes little-endian.
            guard stored.count >= 3 else { return .undecided }
            let sign = stored[0], length = Int(stored[2])
            guard sign <= 1, length <= 8, stored.count == 3 + length else { return .undecided }
            var magnitude: UInt64 = 0
            for i in 0..<length { magnitude |= UInt64(stored[3 + i]) << (8 * UInt64(i)) }
            // A negative zero is how a NaN is stored.
            if sign == 1 && magnitude == 0 { return .undecided }
            let left = Number(negative: sign == 1, exponent: Int(Int8(bitPattern: stored[1])), magnitude: magnitude)
            return .ordered(Number.order(left, right))
        case (.double, .double(let right)), (.date, .double(let right)):
            guard let bits = try? reader.u64() else { return .undecided }
            let left = Double(bitPattern: bits)
            if left.isNaN { return .unordered }
            return .ordered(left < right ? -1 : (left == right ? 0 : 1))
        case (.bool, .bool(let right)):
            guard let byte = try? reader.byte() else { return .undecided }
            let left = byte != 0
            return .ordered(left == right ? 0 : (left ? 1 : -1))
        default:
            return .undecided
        }
    }
}
