/// The values of a prepared fetch's variables, in the order of its names (a few: looked up
/// by a linear search, cheaper than hashing).
struct FetchBindings {
    let names: [String]
    let values: [StoredValue]

    subscript(name: String) -> StoredValue? {
        for i in names.indices where names[i] == name { return values[i] }
        return nil
    }

    /// The kinds of the values, 4 bits each (kind + 1); 0 when there are none or more than 16.
    var packedKinds: UInt64 {
        guard values.count <= 16 else { return 0 }
        var packed: UInt64 = 0
        for value in values { packed = packed << 4 | UInt64(value.kindTag + 1) }
        return packed
    }
}
