import StrataStorage

/// The storage transaction a reader works in: a snapshot, or the write transaction itself
/// (which sees its own changes). An enum, not a protocol, so calls dispatch without boxing.
enum TreeSource {
    case read(ReadTransaction)
    case write(WriteTransaction)

    func get(_ tree: String, _ key: [UInt8]) throws -> [UInt8]? {
        switch self {
        case .read(let tx): return try tx.tree(tree)?.get(key)
        case .write(let tx): return try tx.tree(tree)?.get(key)
        }
    }

    func cursor(_ tree: String) throws -> Cursor? {
        switch self {
        case .read(let tx): return try tx.tree(tree)?.makeCursor()
        case .write(let tx): return try tx.tree(tree)?.makeCursor()
        }
    }

    func count(_ tree: String) throws -> Int {
        switch self {
        case .read(let tx): return try tx.tree(tree)?.count ?? 0
        case .write(let tx): return try tx.tree(tree)?.count ?? 0
        }
    }

    /// Calls `body` with the key of every entry starting with `prefix` (in order) until it
    /// returns false.
    func scan(_ tree: String, prefix: [UInt8], _ body: (UnsafeRawBufferPointer, Cursor) throws -> Bool) throws {
        guard let treeCursor = try cursor(tree) else { return }
        var ok = try treeCursor.seek(prefix)
        while ok {
            let key = treeCursor.key
            guard key.count >= prefix.count,
                  prefix.withUnsafeBytes({ prefixBytes in
                      memcmp(prefixBytes.baseAddress!, key.baseAddress!, prefix.count) == 0
                  }) else { return }
            guard try body(key, treeCursor) else { return }
            ok = try treeCursor.next()
        }
    }

    /// The primary keys stored as the 8 bytes after `prefix` in each matching key (which ends
    /// there: rows, inverse and join keys); a key of another length throws `corrupt`.
    func keys(_ tree: String, prefix: [UInt8]) throws -> [UInt64] {
        var out: [UInt64] = []
        try scan(tree, prefix: prefix) { key, _ in
            out.append(try RecordTrees.primaryKey(key, at: prefix.count, exactLength: prefix.count + 8, tree: tree))
            return true
        }
        return out
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
