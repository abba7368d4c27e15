import Foundation
import StrataRecords

/// Converts between a property's Swift type and the store's values (for the dynamic,
/// key-based API: `value(forKey:)`, `changedValues()`).
struct ValueBridge {
    var toSwift: (StoredValue) -> Any
    var fromSwift: (Any?) -> StoredValue?
    /// `toSwift` that throws instead of reading a fallback, for types some stored values do not
    /// fit (a ``CodableAttribute`` whose JSON another version of its type wrote); nil for the
    /// others.
    var strictToSwift: ((StoredValue) throws -> Any)?
    /// Why `fromSwift` refused a value of the right type (a ``CodableAttribute``'s value that
    /// does not encode: the encoder's reason); nil for the others.
    var whyUnencodable: ((Any?) -> String?)?

    /// A ``CodableAttribute``'s bridge: JSON in a binary value; a value that does not decode
    /// reads as `fallback` (the declared default, or nil).
    init<T: Codable>(codable type: T.Type, fallback: T) {
        toSwift = { (try? $0.decoded(as: T.self)) ?? fallback }
        fromSwift = { any in
            if any == nil { return T.self is any OptionalUnwrapping.Type ? .null : nil }
            if let value = any as? T { return try? StoredValue(encoding: value) }
            if let stored = any as? StoredValue, (try? stored.decoded(as: T.self)) != nil { return stored }
            return nil
        }
        strictToSwift = { try $0.decoded(as: T.self) }
        whyUnencodable = { any in
            guard let value = any as? T else { return nil }
            do {
                _ = try StoredValue(encoding: value)
                return nil
            } catch let error as StrataError {
                if case .invalidArgument(let reason) = error { return reason }
                return "\(error)"
            } catch {
                return "\(error)"
            }
        }
    }

    init<T: PersistentValue>(_ type: T.Type) {
        toSwift = Self.concreteToSwift(T.self) ?? { T(storedValue: $0) ?? T.placeholder }
        fromSwift = { any in
            if any == nil { return T.isOptional ? .null : nil }
            if let value = any as? T { return value.storedValue }
            if let stored = any as? StoredValue { return T(storedValue: stored) != nil ? stored : nil }
            // Any number the attribute holds exactly (as Core Data's key-value coding takes any
            // NSNumber that fits): `5` for an Int64 or Double, `2.0` for an Int16, `0.1` for a
            // Decimal; `70_000` for an Int16 or `0.5` for an Int64 is refused.
            if let number = ValueBridge.number(any), let exact = T.attributeType.coerce(number),
               T(storedValue: exact) != nil {
                return exact
            }
            return nil
        }
        strictToSwift = nil
        whyUnencodable = nil
    }

    /// `toSwift` of each conforming type as a closure compiled for that type. A save boxes
    /// every changed attribute of every object it writes for `validateValue(_:forKey:)`, and
    /// the generic closure looks up `Optional<T>`'s metadata at each call, most of its cost
    /// (decision 48); the conversion is the same. Nil for another type (the generic closure
    /// serves it).
    private static func concreteToSwift<T: PersistentValue>(_: T.Type) -> ((StoredValue) -> Any)? {
        let metatype: Any.Type = T.self
        switch ObjectIdentifier(metatype) {
        case ObjectIdentifier(String.self): return make(String.self)
        case ObjectIdentifier(Int64.self): return make(Int64.self)
        case ObjectIdentifier(Bool.self): return make(Bool.self)
        case ObjectIdentifier(Int.self): return make(Int.self)
        case ObjectIdentifier(Int32.self): return make(Int32.self)
        case ObjectIdentifier(Int16.self): return make(Int16.self)
        case ObjectIdentifier(Double.self): return make(Double.self)
        case ObjectIdentifier(Decimal.self): return make(Decimal.self)
        case ObjectIdentifier(Date.self): return make(Date.self)
        case ObjectIdentifier(UUID.self): return make(UUID.self)
        case ObjectIdentifier([UInt8].self): return make([UInt8].self)
        case ObjectIdentifier(Data.self): return make(Data.self)
        case ObjectIdentifier(String?.self): return make(String?.self)
        case ObjectIdentifier(Int64?.self): return make(Int64?.self)
        case ObjectIdentifier(Bool?.self): return make(Bool?.self)
        case ObjectIdentifier(Int?.self): return make(Int?.self)
        case ObjectIdentifier(Int32?.self): return make(Int32?.self)
        case ObjectIdentifier(Int16?.self): return make(Int16?.self)
        case ObjectIdentifier(Double?.self): return make(Double?.self)
        case ObjectIdentifier(Decimal?.self): return make(Decimal?.self)
        case ObjectIdentifier(Date?.self): return make(Date?.self)
        case ObjectIdentifier(UUID?.self): return make(UUID?.self)
        case ObjectIdentifier([UInt8]?.self): return make([UInt8]?.self)
        case ObjectIdentifier(Data?.self): return make(Data?.self)
        default: return nil
        }
    }

    /// The `toSwift` closure of `U`, specialized where `U` is a concrete type (outside any
    /// generic context, so the closure depends on nothing but `U`).
    private static func make<U: PersistentValue>(_: U.Type) -> (StoredValue) -> Any {
        { U(storedValue: $0) ?? U.placeholder }
    }

    /// A Swift number as the store's value of its own kind; nil for anything else (a `Bool`
    /// is not a number here, nor is an unsigned integer above `Int64.max`).
    static func number(_ any: Any?) -> StoredValue? {
        switch any {
        case let x as Int: return .int(Int64(x))
        case let x as Int8: return .int(Int64(x))
        case let x as Int16: return .int(Int64(x))
        case let x as Int32: return .int(Int64(x))
        case let x as Int64: return .int(x)
        case let x as UInt: return Int64(exactly: x).map(StoredValue.int)
        case let x as UInt8: return .int(Int64(x))
        case let x as UInt16: return .int(Int64(x))
        case let x as UInt32: return .int(Int64(x))
        case let x as UInt64: return Int64(exactly: x).map(StoredValue.int)
        case let x as Float: return .double(Double(x))
        case let x as Double: return .double(x)
        case let x as Decimal: return .decimal(x)
        default: return nil
        }
    }
}
