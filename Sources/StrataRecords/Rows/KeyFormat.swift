import StrataStorage

/// The version of the record layer's derived encodings a store was written with: index, unique
/// and extremes keys, and the text of `lowercase:` and `canonical:` derived values (FORMAT.md
/// §12, "Record format"). It lives in `records:meta` under `keys`, one byte.
///
/// Version 2 keys strings by their NFC bytes, marks cut strings with `00 02`, keys every NaN
/// alike, and lowercases with Final_Sigma; version 1 (stores that have no `keys` entry) keyed
/// the bytes as given. Opening a version-1 store read-write rebuilds every index, uniqueness
/// entry and derived value from the rows (a lightweight migration of the model to itself) and
/// records version 2; a read-only open of such a store is refused, since its indexes would
/// answer fetches differently from a scan. See docs/decisions.md, "String equality and index keys".
enum KeyFormat {
    static let current: UInt8 = 2
    static let metaKey = Array("keys".utf8)

    /// Records the current version (a new store, or one whose keys were all just rebuilt).
    static func mark(_ tx: WriteTransaction) throws {
        try tx.treeCreatingIfMissing(RecordTrees.meta).put(metaKey, [current])
    }

    /// The version the store's keys were written with.
    static func version(_ storage: Store) throws -> UInt8 {
        guard let bytes = try storage.read({ tx in try tx.tree(RecordTrees.meta)?.get(metaKey) }) else { return 1 }
        guard bytes.count == 1 else {
            throw StrataError.corrupt("records:meta: the key format entry has \(bytes.count) bytes (1 expected)",
                                      offset: nil)
        }
        return bytes[0]
    }

    /// Throws `StrataError.unsupportedFormatVersion` when the store's keys were written by a
    /// newer version (before a migration rewrites them), and returns the version otherwise.
    @discardableResult
    static func refuseNewer(_ storage: Store) throws -> UInt8 {
        let found = try version(storage)
        if found > current {
            throw StrataError.unsupportedFormatVersion(found: UInt32(found), supported: UInt32(current))
        }
        return found
    }

    /// Brings an opened store whose model matches `model` to the current version.
    ///
    /// - Throws: `StrataError.unsupportedFormatVersion` for keys written by a newer version;
    ///   `StrataError.readOnly` when an older store is opened read-only; what the rebuild throws.
    static func upgrade(_ storage: Store, model: Model, readOnly: Bool) throws {
        let found = try refuseNewer(storage)
        if found == current { return }
        if readOnly {
            throw StrataError.readOnly(reason: "the store's index keys use record format \(found) (bytes as given); "
                                       + "open it read-write once to rebuild them in format \(current) (NFC strings)")
        }
        try storage.write { tx in
            try Migration(old: model, new: model).run(in: tx)
            try mark(tx)
        }
    }
}
