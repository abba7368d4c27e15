import Foundation

// Literal values in a format string: numbers, and `CAST(value, "Type")`, which is how
// `FetchPredicate.description` writes the kinds that have no literal of their own.

extension PredicateParser {
    /// Integers are `int` (a `decimal` when too large, so they stay exact); a fraction or
    /// exponent makes a `double`, as in `NSPredicate`.
    func number(_ text: String, at token: PredicateToken) throws -> StoredValue {
        var digits = Substring(text)
        let negative = digits.hasPrefix("-")
        if negative { digits = digits.dropFirst() }
        if digits.count > 1, digits.hasPrefix("0"), let base = digits.dropFirst().first, "xXoObB".contains(base) {
            let radix = "xX".contains(base) ? 16 : ("oO".contains(base) ? 8 : 2)
            guard let magnitude = UInt64(digits.dropFirst(2), radix: radix) else {
                throw error("invalid number \(text)", at: token)
            }
            if !negative, let value = Int64(exactly: magnitude) { return .int(value) }
            if negative, magnitude <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- magnitude)) }
            throw error("number \(text) does not fit in 64 bits", at: token)
        }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            guard let double = Double(text) else { throw error("invalid number \(text)", at: token) }
            return .double(double)
        }
        if let integer = Int64(text) { return .int(integer) }
        guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw error("invalid number \(text)", at: token)
        }
        return .decimal(decimal)
    }

    /// `CAST(value, "Type")`: how ``FetchPredicate/description`` writes the kinds that have no
    /// literal (dates, decimals, UUIDs, bytes), with Core Data's type names.
    mutating func parseCast(at castToken: PredicateToken) throws -> StoredValue {
        try expect(symbol: "(", "'(' after CAST")
        let operandToken = current
        let text: String?
        let operand: StoredValue
        switch operandToken.kind {
        case .number(let literal):
            text = literal
            operand = try number(literal, at: operandToken)
            advance()
        case .string(let literal):
            text = literal
            operand = .string(literal)
            advance()
        default:
            guard case .constant(let value) = try parseExpression() else {
                throw error("CAST needs a constant to convert", at: operandToken)
            }
            text = nil
            operand = value
        }
        try expect(symbol: ",", "',' and a type name in CAST")
        let typeToken = current
        guard case .string(let typeName) = typeToken.kind else {
            throw error("expected a quoted type name such as \"NSDate\" in CAST", at: typeToken)
        }
        advance()
        try expect(symbol: ")", "')' closing CAST")
        guard let value = Self.cast(operand, text: text, to: typeName) else {
            throw error("cannot CAST \(operand) to \"\(typeName)\"", at: castToken)
        }
        return value
    }

    static func cast(_ operand: StoredValue, text: String?, to typeName: String) -> StoredValue? {
        switch typeName.lowercased() {
        case "nsdate", "date":
            switch operand {
            case .date: return operand
            case .string(let string): return Double(string).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
            default: return operand.doubleValue.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
            }
        case "nsdecimalnumber", "decimal":
            if case .decimal = operand { return operand }
            guard let digits = text ?? numericText(operand), isDecimalText(digits) else { return nil }
            return Decimal(string: digits, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case "nsnumber", "number":
            switch operand {
            case .int, .double, .decimal: return operand
            case .bool(let flag): return .int(flag ? 1 : 0)
            case .string(let string):
                if let integer = Int64(string) { return .int(integer) }
                return Double(string).map { .double($0) }
            default: return nil
            }
        case "nsstring", "string":
            if case .string = operand { return operand }
            return text.map { .string($0) }
        case "nsuuid", "uuid":
            guard case .string(let string) = operand else { return operand.isUUID ? operand : nil }
            return UUID(uuidString: string).map { .uuid($0) }
        case "nsdata", "data":
            guard case .string(let string) = operand else { return nil }
            return hexBytes(string).map { .binary($0) }
        default:
            return nil
        }
    }

    private static func numericText(_ value: StoredValue) -> String? {
        if case .int(let integer) = value { return String(integer) }
        return nil
    }

    /// `Decimal(string:)` accepts a valid prefix ("1.5abc" is 1.5); this insists on all of it.
    private static func isDecimalText(_ text: String) -> Bool {
        var unsigned = Substring(text)
        if unsigned.hasPrefix("-") || unsigned.hasPrefix("+") { unsigned = unsigned.dropFirst() }
        let parts = unsigned.split(separator: "e", maxSplits: 1, omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "E", maxSplits: 1, omittingEmptySubsequences: false) }
        guard let mantissa = parts.first, parts.count <= 2 else { return false }
        let halves = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.allSatisfy({ $0.allSatisfy(\.isASCIIDigitCharacter) }),
              halves.contains(where: { !$0.isEmpty }) else { return false }
        if parts.count == 2 {
            var exponent = parts[1]
            if exponent.hasPrefix("-") || exponent.hasPrefix("+") { exponent = exponent.dropFirst() }
            return !exponent.isEmpty && exponent.allSatisfy(\.isASCIIDigitCharacter)
        }
        return true
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = hexValue(digits[i]), let lo = hexValue(digits[i + 1]) else { return nil }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

private extension Character {
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}

private extension StoredValue {
    var isUUID: Bool { if case .uuid = self { return true } else { return false } }
}
