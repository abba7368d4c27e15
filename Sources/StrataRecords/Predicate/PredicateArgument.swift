import Foundation

/// A Swift value that can stand in a predicate: a `%@` argument of
/// ``FetchPredicate/init(format:_:)``, or the constant side of a typed-builder comparison such as
/// `PropertyPath("itemCount") > 5`.
///
/// Integers of every width, `Double`, `Float`, `Bool`, `String`, `Date`, `UUID`, `Decimal`,
/// `[UInt8]` (bytes), ``StoredValue``, ``PropertyPath``, optionals of these (`nil` is `NIL`) and arrays of
/// these (a list, for `IN` and `BETWEEN`) conform. A mixed list is an array of ``StoredValue``.
public protocol PredicateArgument {
    /// The expression this argument stands for: usually a constant, a list for an array.
    var predicateExpression: FetchExpression { get }

    /// The expression an array of this type stands for.
    ///
    /// A list by default; `UInt8` overrides it because `[UInt8]` is how Swift spells bytes, and
    /// a conditional conformance of `Array` cannot be specialised per element type.
    static func predicateExpression(forArray elements: [Self]) -> FetchExpression
}

extension PredicateArgument {
    /// A list of the elements' expressions.
    public static func predicateExpression(forArray elements: [Self]) -> FetchExpression {
        .list(elements.map(\.predicateExpression))
    }
}

extension StoredValue: PredicateArgument {
    /// The value itself as a constant.
    public var predicateExpression: FetchExpression { .constant(self) }
}

extension Bool: PredicateArgument {
    /// `TRUE` or `FALSE`.
    public var predicateExpression: FetchExpression { .constant(.bool(self)) }
}

extension String: PredicateArgument {
    /// A string constant (use `%K` for a key path held in a string).
    public var predicateExpression: FetchExpression { .constant(.string(self)) }
}

extension Substring: PredicateArgument {
    /// A string constant.
    public var predicateExpression: FetchExpression { .constant(.string(String(self))) }
}

extension Int: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: FetchExpression { .constant(.int(Int64(self))) }
}

extension Int64: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: FetchExpression { .constant(.int(self)) }
}

extension Int32: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: FetchExpression { .constant(.int(Int64(self))) }
}

extension Int16: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: FetchExpression { .constant(.int(Int64(self))) }
}

extension Int8: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: FetchExpression { .constant(.int(Int64(self))) }
}

extension UInt: PredicateArgument {
    /// An integer constant; a decimal above `Int64.max`, where `int` cannot hold it exactly.
    public var predicateExpression: FetchExpression { UInt64(self).predicateExpression }
}

extension UInt64: PredicateArgument {
    /// An integer constant; a decimal above `Int64.max`, where `int` cannot hold it exactly.
    public var predicateExpression: FetchExpression {
        if let integer = Int64(exactly: self) { return .constant(.int(integer)) }
        return .constant(.decimal(Decimal(self)))
    }
}

extension UInt32: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: FetchExpression { .constant(.int(Int64(self))) }
}

extension UInt16: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: FetchExpression { .constant(.int(Int64(self))) }
}

extension UInt8: PredicateArgument {
    /// An integer constant.
    public var predicateExpression: FetchExpression { .constant(.int(Int64(self))) }

    /// Bytes: a `binary` constant rather than a list of small integers.
    public static func predicateExpression(forArray elements: [UInt8]) -> FetchExpression {
        .constant(.binary(elements))
    }
}

extension Double: PredicateArgument {
    /// A floating-point constant.
    public var predicateExpression: FetchExpression { .constant(.double(self)) }
}

extension Float: PredicateArgument {
    /// A floating-point constant.
    public var predicateExpression: FetchExpression { .constant(.double(Double(self))) }
}

extension Decimal: PredicateArgument {
    /// A decimal constant, compared exactly with integers and other decimals.
    public var predicateExpression: FetchExpression { .constant(.decimal(self)) }
}

extension Date: PredicateArgument {
    /// A date constant.
    public var predicateExpression: FetchExpression { .constant(.date(self)) }
}

extension UUID: PredicateArgument {
    /// A UUID constant.
    public var predicateExpression: FetchExpression { .constant(.uuid(self)) }
}

extension Optional: PredicateArgument where Wrapped: PredicateArgument {
    /// The wrapped value's expression, or `NIL`.
    public var predicateExpression: FetchExpression {
        switch self {
        case .some(let wrapped): return wrapped.predicateExpression
        case .none: return .constant(.null)
        }
    }
}

extension Array: PredicateArgument where Element: PredicateArgument {
    /// A list of the elements (bytes for `[UInt8]`).
    public var predicateExpression: FetchExpression { Element.predicateExpression(forArray: self) }
}
