import Foundation

// Placeholder substitution: `%@`, `%K`, `%d`/`%i` and `%f` take the format's arguments in order.

extension PredicateParser {
    private mutating func nextArgument(for token: PredicateToken) throws -> (any PredicateArgument)? {
        guard argumentsUsed < arguments.count else {
            throw error("too few arguments: no argument for placeholder \(describe(token)) "
                        + "(\(arguments.count) given)", at: token)
        }
        defer { argumentsUsed += 1 }
        return arguments[argumentsUsed]
    }

    mutating func substitute(_ kind: Character, at token: PredicateToken) throws -> FetchExpression {
        switch kind {
        case "K":
            let inserted = try keyPathArgument(at: token)
            guard case .keyPath(let path) = inserted else { return inserted }
            return try parseKeyPath(from: path)
        case "d":
            let argument = try nextArgument(for: token)
            guard case .constant(.int(let integer))? = argument?.predicateExpression else {
                throw error("argument \(argumentsUsed) for %d is not an integer", at: token)
            }
            return .constant(.int(integer))
        case "f":
            let argument = try nextArgument(for: token)
            switch argument?.predicateExpression {
            case .constant(.double(let double))?: return .constant(.double(double))
            case .constant(.int(let integer))?: return .constant(.double(Double(integer)))
            case .constant(.decimal(let decimal))?:
                return .constant(.double(NSDecimalNumber(decimal: decimal).doubleValue))
            default: throw error("argument \(argumentsUsed) for %f is not a number", at: token)
            }
        default:
            // `%@`: a value, a list for an array, a key path for a `PropertyPath`.
            return try nextArgument(for: token)?.predicateExpression ?? .constant(.null)
        }
    }

    /// A `%K` argument: a `String` key path such as `"list.name"` or `"items.@count"`.
    mutating func keyPathArgument(at token: PredicateToken) throws -> FetchExpression {
        let argument = try nextArgument(for: token)
        let path: String
        switch argument {
        case let text as String: path = text
        case let text as Substring: path = String(text)
        case let key as PropertyPath: return key.expression
        default: throw error("argument \(argumentsUsed) for %K is not a key path string", at: token)
        }
        let key = PropertyPath(path)
        guard !key.path.contains(where: \.isEmpty) else {
            throw error("argument \(argumentsUsed) for %K is not a key path: \"\(path)\"", at: token)
        }
        return key.expression
    }
}
