import StrataRecords

extension PostgresBindings {
    /// Appends a Strata value as the parameter of a column of its type (the statement casts
    /// each parameter to its column's type, so an `int` fits a `smallint` column).
    mutating func append(stored value: StoredValue) {
        switch value {
        case .null: appendNull()
        case .bool(let flag): append(flag)
        case .int(let integer): append(integer)
        case .double(let double): append(double)
        // As text, which the statement casts to `numeric`: the server parses it exactly, and
        // `Decimal`'s description is already that text.
        case .decimal(let decimal): append(decimal.isNaN ? "NaN" : decimal.description)
        case .string(let string): append(string)
        case .date(let date): append(date)
        case .uuid(let uuid): append(uuid)
        case .binary(let bytes): append(bytes: bytes)
        }
    }
}
