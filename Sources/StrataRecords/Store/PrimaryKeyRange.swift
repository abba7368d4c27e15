import StrataStorage

/// The primary keys one store hands out (FORMAT.md §12, "Primary-key ranges"; decision 110).
///
/// Stores that share one dataset must never give two rows the same key, even while they cannot
/// reach each other. The 64-bit key space below 2^62 is cut into 2^22 ranges of 2^40 keys;
/// a store allocates only from its range, and each store of a dataset holds a range of its own
/// (handed out by the hub the stores replicate through). Range 0 is `1..<2^40`, where every
/// store starts, so the keys of a store made before ranges existed lie in it and stay valid;
/// range `r > 0` is `r·2^40..<(r+1)·2^40`. Keys from 2^62 up belong to no store: a server
/// application's inserts take them. Keys stay ordered per store (a counter within the range)
/// and compact for the store that keeps range 0.
package struct PrimaryKeyRange: Hashable, Sendable, CustomStringConvertible {
    /// How many low bits number the keys inside one range: 2^40 keys a range.
    package static let keyBits: UInt64 = 40
    /// The number of ranges: every key a store allocates lies below 2^62.
    package static let rangeCount: UInt64 = 1 << 22

    /// The range's number, below ``rangeCount``.
    package let number: UInt64

    /// The range numbered `number`; nil outside `0..<rangeCount`.
    package init?(number: UInt64) {
        guard number < Self.rangeCount else { return nil }
        self.number = number
    }

    /// Range 0, the range of a store that never joined a dataset.
    package static let initial = PrimaryKeyRange(number: 0)!

    /// The first key of the range (key 0 is never a primary key).
    package var lowerBound: UInt64 { number == 0 ? 1 : number << Self.keyBits }

    /// The first key past the range.
    package var upperBound: UInt64 { (number + 1) << Self.keyBits }

    /// Whether `key` is one of the range's keys.
    package func contains(_ key: UInt64) -> Bool { key >= lowerBound && key < upperBound }

    /// The range that holds `key`, if a store's range holds it (keys from 2^62 up are no store's).
    package static func holding(_ key: UInt64) -> PrimaryKeyRange? {
        key == 0 ? nil : PrimaryKeyRange(number: key >> keyBits)
    }

    package var description: String { "key range \(number)" }
}

extension RecordTrees {
    /// In `meta`: the number of the store's ``PrimaryKeyRange`` (8 bytes big-endian; absent: 0).
    static let keyRangeKey = Array("keyrange".utf8)

    /// The store's key range from its `meta` entry: range 0 when the entry is absent, `corrupt`
    /// when it is not 8 bytes or not a range's number.
    static func storedKeyRange(_ value: [UInt8]?) throws -> PrimaryKeyRange {
        guard let value else { return .initial }
        guard value.count == 8 else {
            throw StrataError.corrupt("\(meta): the key range entry is \(value.count) bytes, not 8", offset: nil)
        }
        let number = KeyEncoding.decodePrimaryKey(value)
        guard let range = PrimaryKeyRange(number: number) else {
            throw StrataError.corrupt("\(meta): the key range entry is \(number), past the last range "
                                      + "(\(PrimaryKeyRange.rangeCount - 1))", offset: nil)
        }
        return range
    }
}

extension RecordReader {
    /// The range the store allocates primary keys from (``PrimaryKeyRange``), as of this read.
    package func keyRange() throws -> PrimaryKeyRange {
        try checkOpen()
        return try RecordTrees.storedKeyRange(try source.get(RecordTrees.meta, RecordTrees.keyRangeKey))
    }
}
