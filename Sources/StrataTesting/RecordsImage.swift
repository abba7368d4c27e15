import StrataStorage

/// A record store's content as plain trees — `records:meta`, `rows:…`, `index:…`, `unique:…`,
/// `inverse:…`, `join:…`, `extremes:…` (FORMAT.md §12) — and a byte format for it, the input
/// of the record fuzzers.
///
/// The fuzzers damage this content (rows, index keys, inverse and join keys, the stored model
/// text) and let the storage engine write the result ( ``storeBytes()`` ): every frame and
/// header checksum is then valid, so the damage reaches the record layer's decoders instead of
/// stopping at a checksum, and it lies in page images (checkpointed) or in commit records
/// (replayed at open) as ``placement`` says. Storage-level damage is the other fuzzers' part.
///
/// **Byte format** (lenient: whatever does not parse ends the image, so every byte string is an
/// image): `u8 placement` (modulo 3), then trees until the end: `u8 name length`, the name
/// (UTF-8), `u16le entry count`, and per entry `u16le key length`, the key, `u16le value length`,
/// the value.
package struct RecordsImage: Sendable, Equatable {
    /// One key and its value.
    package struct Entry: Sendable, Equatable {
        package var key: [UInt8]
        package var value: [UInt8]

        /// An entry of `key` and `value`.
        package init(key: [UInt8], value: [UInt8]) {
            self.key = key
            self.value = value
        }
    }

    /// One tree: its name and entries (in any order; the store sorts them).
    package struct Tree: Sendable, Equatable {
        package var name: String
        package var entries: [Entry]

        /// A tree named `name` holding `entries`.
        package init(name: String, entries: [Entry]) {
            self.name = name
            self.entries = entries
        }
    }

    /// Where the entries are when the store is opened.
    package enum Placement: UInt8, Sendable, CaseIterable {
        /// In page images: written, then checkpointed.
        case pages = 0
        /// In commit records after the checkpoint, replayed at open (the store was not closed).
        case log = 1
        /// Every other entry of each tree in pages, the rest in commit records after them.
        case split = 2
    }

    /// The trees, in the order they are created.
    package var trees: [Tree]
    /// Where the entries are when the store is opened.
    package var placement: Placement

    /// An image of `trees` placed as `placement` says.
    package init(trees: [Tree], placement: Placement = .pages) {
        self.trees = trees
        self.placement = placement
    }

    /// Parses the byte format; never fails (a cut or overlong field ends the image there).
    package init(bytes: [UInt8]) {
        placement = Placement(rawValue: (bytes.first ?? 0) % 3) ?? .pages
        trees = []
        var at = 1
        func u16() -> Int? {
            guard at + 2 <= bytes.count else { return nil }
            defer { at += 2 }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8
        }
        func take(_ length: Int) -> [UInt8]? {
            guard length <= bytes.count - at else { return nil }
            defer { at += length }
            return Array(bytes[at..<(at + length)])
        }
        while at < bytes.count {
            let nameLength = Int(bytes[at])
            at += 1
            guard let name = take(nameLength), let count = u16() else { return }
            var tree = Tree(name: String(decoding: name, as: UTF8.self), entries: [])
            for _ in 0..<count {
                guard let keyLength = u16(), let key = take(keyLength), let valueLength = u16(),
                      let value = take(valueLength) else {
                    trees.append(tree)
                    return
                }
                tree.entries.append(Entry(key: key, value: value))
            }
            trees.append(tree)
        }
    }

    /// The byte format of this image. Names longer than 255 bytes, keys or values longer than
    /// 65,535 bytes and trees of more than 65,535 entries are cut to fit.
    package var bytes: [UInt8] {
        var out: [UInt8] = [placement.rawValue]
        func u16(_ value: Int) { out += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
        for tree in trees {
            let name = Array(tree.name.utf8.prefix(255))
            out.append(UInt8(name.count))
            out += name
            let entries = tree.entries.prefix(0xFFFF)
            u16(entries.count)
            for entry in entries {
                u16(min(entry.key.count, 0xFFFF))
                out += entry.key.prefix(0xFFFF)
                u16(min(entry.value.count, 0xFFFF))
                out += entry.value.prefix(0xFFFF)
            }
        }
        return out
    }

    /// Every tree of `store`'s last commit (placement `.pages`).
    package static func read(from store: Store) throws -> RecordsImage {
        try store.read { tx in
            var trees: [Tree] = []
            for name in try tx.treeNames {
                guard let tree = try tx.tree(name) else { continue }
                trees.append(Tree(name: name, entries: try tree.entries().map { Entry(key: $0.key, value: $0.value) }))
            }
            return RecordsImage(trees: trees)
        }
    }

    /// The path the image's store has in ``storeBytes()``'s simulated file system.
    package static let path = "/records/image.strata"

    /// The options ``storeBytes()`` writes with: no timer syncs, no compaction, a checkpoint
    /// only when asked.
    package static func options(_ fs: any FileSystem) -> StoreOptions {
        var options = StoreOptions(durability: .normal)
        options.fileSystem = fs
        options.syncIntervalMilliseconds = 3_600_000
        options.compactOnCloseGarbageRatio = 1
        options.checkpointLogBytes = 1 << 30
        options.checkpointDirtyBytes = 1 << 30
        options.cacheBytes = 4 << 20
        return options
    }

    /// Writes the image with the storage engine into a new store file and returns its bytes.
    /// Entries the engine refuses (an empty key or one over 1,024 bytes; a tree name it
    /// rejects) are left out. `.pages`: one transaction, then closed (a checkpoint). `.log`:
    /// one transaction after the creation's checkpoint, the file left as a crash leaves it.
    /// `.split`: the even entries of each tree, a checkpoint, then the odd ones, left so.
    package func storeBytes() throws -> [UInt8] {
        let fs = SimulatedFileSystem()
        let store = try Store(path: RecordsImage.path, options: RecordsImage.options(fs))
        func put(_ select: (Int) -> Bool) throws {
            try store.write { tx in
                for imageTree in trees {
                    guard let tree = try? tx.tree(imageTree.name, createIfMissing: true) else { continue }
                    for (i, entry) in imageTree.entries.enumerated() where select(i) {
                        do {
                            try tree.put(entry.key, entry.value)
                        } catch StrataError.keyTooLarge, StrataError.valueTooLarge {
                            continue
                        }
                    }
                }
            }
        }
        switch placement {
        case .pages:
            try put { _ in true }
            try store.close()
        case .log:
            try put { _ in true }
            fs.crashAfter(operations: 0)
        case .split:
            try put { $0 % 2 == 0 }
            try store.checkpoint()
            try put { $0 % 2 == 1 }
            fs.crashAfter(operations: 0)
        }
        withExtendedLifetime(store) {}
        return fs.contents(of: RecordsImage.path) ?? []
    }
}
