import Foundation
import StrataStorage

// Codable values kept in binary attributes (decision 67): the bytes are the value's JSON text
// (RFC 8259, UTF-8) as Foundation's `JSONEncoder` writes it with its keys sorted, so equal values
// encode to equal bytes — what change tracking and predicates compare — and any JSON reader can
// read a store's values without Swift. Decoding is where a store meets another version of the
// type: it throws, it never traps.

extension StoredValue {
    /// `value` as a binary attribute keeps it: its JSON encoding, keys sorted. Optional nil is
    /// `.null` (no value).
    ///
    /// Throws `StrataError.invalidArgument` when `value` cannot be encoded (a `Double` NaN or
    /// infinity, an `encode(to:)` that throws), naming the type and the encoder's reason.
    public init<T: Encodable>(encoding value: T) throws {
        let bytes: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            bytes = try encoder.encode(value)
        } catch {
            throw StrataError.invalidArgument("a \(T.self) value cannot be stored as JSON: \(error)")
        }
        self = bytes.elementsEqual("null".utf8) ? .null : .binary(Array(bytes))
    }

    /// The `Codable` value this binary attribute value holds, decoded as `type`; `.null` decodes
    /// as nil for an optional type.
    ///
    /// Throws `StrataError.invalidArgument` when the value is neither binary nor null, or its
    /// bytes do not decode as `type` (a store written by another version of the type), with the
    /// decoder's reason.
    public func decoded<T: Decodable>(as type: T.Type) throws -> T {
        let bytes: Data
        switch self {
        case .null: bytes = Data("null".utf8)
        case .binary(let stored): bytes = Data(stored)
        default: throw StrataError.invalidArgument("\(self) is not a stored JSON value (expected binary)")
        }
        do {
            return try JSONDecoder().decode(T.self, from: bytes)
        } catch {
            throw StrataError.invalidArgument("the stored value does not decode as \(T.self): \(Self.reason(error))")
        }
    }

    /// A decoding error in a line: what was expected where.
    private static func reason(_ error: Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch decoding {
        case .typeMismatch(let type, let context): return "expected \(type)\(path(context))"
        case .valueNotFound(let type, let context): return "no \(type) value\(path(context))"
        case .keyNotFound(let key, let context): return "no key '\(key.stringValue)'\(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}
