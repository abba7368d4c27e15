import StrataStorage

/// The version of the record layer's derived encodings a store was written with: index, unique
/// and extremes keys, word index entries, and the text of `lowercase:` and `canonical:` derived
/// values (FORMAT.md §12, "Record format"). It lives in `records:meta` under `keys`, one byte.
///
/// Version 4 lets a word index hold batches of recent changes beside its blocks
/// (``WordChanges``, decisions 96 and 98); a version-3 store holds none, so version 4 reads it as it is
/// and a read-write open only records 4. Version 3 stores a word index's postings in blocks
/// (``PostingBlock``); version 2 held an entry
/// per word and row, which is a block of one posting, so version 3 reads a version-2 store as it
/// is: a read-only open reads it, a read-write open rebuilds its word indexes as full blocks
/// (decision 87). Version 2 keys strings by their NFC bytes, marks cut strings with `00 02`, keys
/// every NaN alike, and lowercases with Final_Sigma; version 1 (stores that have no `keys`
/// entry) keyed the bytes as given. Opening a version-1 store read-write rebuilds every index,
/// uniqueness entry, word index and derived value from the rows (a lightweight migration of the
/// model to itself) and records the current version; a read-only open of such a store is
/// refused, since its indexes would answer fetches differently from a scan. See
/// docs/decisions.md, "String equality and index keys".
enum KeyFormat {
    static let current: UInt8 = 4
    static let metaKey = Array("keys".utf8)
    /// The versions this one reads as they are (a read-only open, a check).
    static let readable: ClosedRange<UInt8> = 2...current

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

    /// What distinguishes record format `version`, for a refusal's message.
    static func describe(_ version: UInt8) -> String {
        switch version {
        case 1: return "strings keyed by their bytes as given"
        case 2: return "NFC string keys, a word index entry per word and row"
        case 3: return "NFC string keys, word postings in blocks"
        default: return "NFC string keys, word postings in blocks and batches of recent changes"
        }
    }

    /// Brings an opened store whose model matches `model` to the current version.
    ///
    /// - Throws: `StrataError.unsupportedFormatVersion` for keys written by a newer version;
    ///   `StrataError.readOnly` when an older store is opened read-only; what the rebuild throws.
    static func upgrade(_ storage: Store, model: Model, readOnly: Bool) throws {
        let found = try refuseNewer(storage)
        if found == current || (readOnly && readable.contains(found)) { return }
        if readOnly {
            throw StrataError.readOnly(reason: "the store's index entries use record format \(found) "
                                       + "(\(describe(found))); open it read-write once to rebuild them in format "
                                       + "\(current) (\(describe(current)))")
        }
        try storage.write { tx in
            if found == 3 {
                // Version 4 adds change entries to word indexes; a version-3 store holds none.
            } else if readable.contains(found) {
                try rebuildWordIndexes(tx, model: model)
            } else {
                try Migration(old: model, new: model).run(in: tx)
            }
            try mark(tx)
        }
    }

    /// Rebuilds every word index from the rows, in key order (each word's postings appended to
    /// its last block), a batch of rows at a time.
    static func rebuildWordIndexes(_ tx: WriteTransaction, model: Model) throws {
        for entity in model.entities where !entity.fullTextFields.isEmpty {
            let names = entity.fullTextFields.indices.map { RecordTrees.words(entity, $0) }
            for name in names where try tx.tree(name) != nil { try tx.dropTree(name) }
            guard let rows = try tx.tree(RecordTrees.rows(entity)) else { continue }
            let trees = try names.map { try tx.treeCreatingIfMissing($0) }
            var pending = entity.fullTextFields.map { PendingWords(fieldCount: $0.count) }
            let vocabulary = WordVocabulary()
            var batched = 0
            let cursor = rows.makeCursor()
            var more = try cursor.first()
            while more {
                let pk = try RecordTrees.primaryKey(cursor.key, at: 0, exactLength: 8, tree: RecordTrees.rows(entity))
                let row = try RowCodec.decode(cursor.value, fields: entity.fields)
                for (i, fields) in entity.fullTextFields.enumerated() {
                    pending[i].changeRow(pk, old: nil, new: row, fields: fields, vocabulary: vocabulary)
                }
                batched += 1
                more = try cursor.next()
                if batched == 10_000 || !more {
                    for i in pending.indices { try pending[i].apply(to: trees[i], name: names[i], vocabulary: vocabulary) }
                    batched = 0
                }
            }
        }
    }
}
