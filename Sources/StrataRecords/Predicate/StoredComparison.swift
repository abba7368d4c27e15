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

    /// What is compared, fixed at init so that a row's test switches on one small value.
    private enum Kind: UInt8, Sendable {
        /// A zigzag varint (int16/32/64) against a number.
        case integer
        /// Sign, exponent, mantissa length, mantissa (a decimal) against a number.
        case decimal
        /// Eight bytes of a double (or a date's seconds since 2001-01-01) against a double.
        case double
        /// One byte against a bool.
        case bool
    }

    /// The field's index in the row.
    let field: Int
    private let kind: Kind
    /// The constant as a number (`.integer`, `.decimal`).
    private let number: Number
    /// The constant as a double (`.double`: never NaN) or a bool (`.bool`).
    private let double: Double
    private let bool: Bool
    /// Which orders of the stored value to the constant (bit 0: below, 1: equal, 2: above) make
    /// the comparison hold, the quantifier's negation applied.
    private let holdsWhenOrdered: UInt8
    /// Whether it holds for no value or NaN (ordered with nothing, equal to nothing).
    private let holdsWhenUnordered: Bool

    /// The comparison of field `field` (of `type`) with `constant`, or nil when the general path
    /// must decide it (another operator or quantifier, kinds this does not pair).
    init?(field: Int, type: AttributeType, op: ComparisonOperator, quantifier: Quantifier, constant: StoredValue) {
        // Bit 0: the stored value is below the constant, bit 1: equal, bit 2: above.
        let orders: UInt8
        switch op {
        case .equal: orders = 0b010
        case .notEqual: orders = 0b101
        case .less: orders = 0b001
        case .lessOrEqual: orders = 0b011
        case .greater: orders = 0b100
        case .greaterOrEqual: orders = 0b110
        default: return nil
        }
        var number = Number(0), double = 0.0, bool = false
        switch (type, constant) {
        case (.int16, .int(let value)), (.int32, .int(let value)), (.int64, .int(let value)),
             (.decimal, .int(let value)):
            number = Number(value)
        case (.int16, .decimal(let value)), (.int32, .decimal(let value)), (.int64, .decimal(let value)),
             (.decimal, .decimal(let value)):
            guard !value.isNaN else { return nil }
            let parts = DecimalCoding.parts(value)
            guard parts.high == 0 else { return nil }
            number = Number(negative: parts.negative, exponent: parts.exponent, magnitude: parts.low)
        case (.double, .double(let value)):
            guard !value.isNaN else { return nil }
            double = value
        case (.date, .date(let value)):
            guard !value.timeIntervalSinceReferenceDate.isNaN else { return nil }
            double = value.timeIntervalSinceReferenceDate
        case (.bool, .bool(let value)):
            bool = value
        default:
            return nil
        }
        switch type {
        case .int16, .int32, .int64: kind = .integer
        case .decimal: kind = .decimal
        case .double, .date: kind = .double
        default: kind = .bool
        }
        self.field = field
        self.number = number
        self.double = double
        self.bool = bool
        // A single value is a collection of one: NONE is the negation, ANY and ALL the test.
        let negated = quantifier == .none
        holdsWhenOrdered = negated ? ~orders & 0b111 : orders
        holdsWhenUnordered = (op == .notEqual) != negated
    }

    /// The comparison's answer for a row whose field holds `stored` (nil: no value), or nil
    /// when the general path decides.
    @inline(__always)
    func evaluate(_ stored: UnsafeRawBufferPointer?) -> Bool? {
        guard let stored else { return holdsWhenUnordered }
        let order: Int
        switch kind {
        case .integer:
            var reader = RowCodec.Reader(bytes: stored)
            guard let zigzag = try? reader.varint() else { return nil }
            let value = Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
            order = Number.order(Number(value), number)
        case .decimal:
            // Sign byte, exponent byte, mantissa length, mantissa bytes little-endian.
            guard stored.count >= 3 else { return nil }
            let negative = stored[0], length = Int(stored[2])
            guard negative <= 1, length <= 8, stored.count == 3 + length else { return nil }
            var magnitude: UInt64 = 0
            for i in 0..<length { magnitude |= UInt64(stored[3 + i]) << (8 * UInt64(i)) }
            // A negative zero is how a NaN is stored.
            if negative == 1 && magnitude == 0 { return nil }
            let exponent = Int(Int8(bitPattern: stored[1]))
            order = Number.order(Number(negative: negative == 1, exponent: exponent, magnitude: magnitude), number)
        case .double:
            guard stored.count == 8 else { return nil }
            var reader = RowCodec.Reader(bytes: stored)
            guard let bits = try? reader.u64() else { return nil }
            let left = Double(bitPattern: bits)
            if left.isNaN { return holdsWhenUnordered }
            order = left < double ? -1 : (left == double ? 0 : 1)
        case .bool:
            guard stored.count == 1 else { return nil }
            let left = stored[0] != 0
            order = left == bool ? 0 : (left ? 1 : -1)
        }
        return holdsWhenOrdered & (1 << UInt8(order + 1)) != 0
    }
}
