extension StoredValue {
    /// The tag before a value in a history entry (FORMAT.md §12, "History"): which case
    /// follows, in the row encoding.
    enum Tag: UInt8 {
        case null = 0, bool, int, double, decimal, string, date, uuid, binary

        /// The attribute type whose row encoding the tag's value has.
        var type: AttributeType? {
            switch self {
            case .null: return nil
            case .bool: return .bool
            case .int: return .int64
            case .double: return .double
            case .decimal: return .decimal
            case .string: return .string
            case .date: return .date
            case .uuid: return .uuid
            case .binary: return .binary
            }
        }
    }
}
