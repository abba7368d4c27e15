extension ReferenceFormat {
    /// A checkpoint frame's payload (FORMAT.md §6): the catalog of trees as of a transaction.
    ///
    /// ```
    ///  0       8              12           20           24
    ///  | txid  | next tree id | live bytes | tree count | tree entry … |
    ///  tree entry: u32 id, u16 name length, name, u64 root offset, u64 entry count, u8 height
    /// ```
    package struct CheckpointRecord: Equatable, Sendable {
        /// One tree of the catalog.
        package struct TreeEntry: Equatable, Sendable {
            package var id: UInt32
            /// The name's bytes as written (valid UTF-8 in a valid record).
            package var name: [UInt8]
            /// The root's page frame; 0 for an empty tree.
            package var rootOffset: UInt64
            package var entryCount: UInt64
            /// 0 for an empty tree, else the root's level + 1.
            package var height: UInt8

            /// An entry with these fields.
            package init(id: UInt32, name: [UInt8], rootOffset: UInt64 = 0, entryCount: UInt64 = 0, height: UInt8 = 0) {
                self.id = id
                self.name = name
                self.rootOffset = rootOffset
                self.entryCount = entryCount
                self.height = height
            }

            /// The name, when it is valid UTF-8.
            package var nameText: String? { String(validating: name, as: UTF8.self) }
        }

        /// The last transaction the checkpoint includes.
        package var txid: UInt64
        /// The id the next created tree gets.
        package var nextTreeID: UInt32
        /// The header region, the frames the trees reach, and this frame's own length.
        package var liveBytes: UInt64
        package var trees: [TreeEntry]

        /// A record with these fields.
        package init(txid: UInt64, nextTreeID: UInt32, liveBytes: UInt64, trees: [TreeEntry]) {
            self.txid = txid
            self.nextTreeID = nextTreeID
            self.liveBytes = liveBytes
            self.trees = trees
        }

        /// Where the fixed fields lie in the payload (for forging one).
        package static let txidPosition = 0
        package static let nextTreeIDPosition = 8
        package static let liveBytesPosition = 12
        package static let treeCountPosition = 20
        /// Where the first tree entry begins.
        package static let entriesPosition = 24

        /// The payload; `claimedTreeCount` writes another tree count than the entries given.
        package func encoded(claimedTreeCount: UInt32? = nil) -> [UInt8] {
            var writer = ByteWriter()
            writer.u64(txid)
            writer.u32(nextTreeID)
            writer.u64(liveBytes)
            writer.u32(claimedTreeCount ?? UInt32(trees.count))
            for tree in trees {
                writer.u32(tree.id)
                writer.u16(UInt16(truncatingIfNeeded: tree.name.count))
                writer.append(tree.name)
                writer.u64(tree.rootOffset)
                writer.u64(tree.entryCount)
                writer.u8(tree.height)
            }
            return writer.bytes
        }

        /// Decodes `payload` and checks what §6 asks of the record alone: a txid below
        /// 2^64 − 2 and a next tree id below 2^32 − 1; exactly `tree count` entries and no byte
        /// after them; names of 1...255 bytes of valid UTF-8; ids below the next tree id; no id
        /// and no name (compared as Unicode strings, canonical equivalence) twice; an empty
        /// tree (root 0) with height 0 and no entries; any other with a height of 1...32 and at
        /// most 2^48 entries. (Live bytes and root offsets are checked against the frame and the
        /// file by the caller.)
        package static func decode(_ payload: [UInt8]) throws -> CheckpointRecord {
            var reader = ByteReader(payload)
            let txid = try reader.u64()
            guard txid < UInt64.max - 1 else { throw FormatViolation("checkpoint txid \(txid) is not below 2^64 - 2") }
            let nextTreeID = try reader.u32()
            guard nextTreeID < UInt32.max else {
                throw FormatViolation("next tree id \(nextTreeID) is not below 2^32 - 1")
            }
            let liveBytes = try reader.u64()
            let treeCount = try reader.u32()
            var trees: [TreeEntry] = []
            var names: [String] = []
            for _ in 0..<treeCount {
                let id = try reader.u32()
                let nameLength = Int(try reader.u16())
                guard (1...ReferenceFormat.maximumTreeNameLength).contains(nameLength) else {
                    throw FormatViolation("tree name length \(nameLength)")
                }
                let entry = TreeEntry(id: id, name: try reader.bytes(nameLength), rootOffset: try reader.u64(),
                                      entryCount: try reader.u64(), height: try reader.u8())
                guard let name = entry.nameText else { throw FormatViolation("tree \(id): a name that is not UTF-8") }
                guard id < nextTreeID else {
                    throw FormatViolation("tree id \(id) is not below the next tree id \(nextTreeID)")
                }
                guard !trees.contains(where: { $0.id == id }), !names.contains(name) else {
                    throw FormatViolation("tree id \(id) or name \(name) listed twice")
                }
                if entry.rootOffset == 0 {
                    guard entry.height == 0, entry.entryCount == 0 else {
                        throw FormatViolation(
                            "empty tree \(name) with height \(entry.height) and \(entry.entryCount) entries")
                    }
                } else {
                    guard (1...ReferenceFormat.maximumHeight).contains(Int(entry.height)),
                          entry.entryCount <= ReferenceFormat.maximumEntryCount else {
                        throw FormatViolation("tree \(name): height \(entry.height), \(entry.entryCount) entries")
                    }
                }
                trees.append(entry)
                names.append(name)
            }
            guard reader.isAtEnd else {
                throw FormatViolation("\(reader.remaining) bytes after the last of \(treeCount) trees")
            }
            return CheckpointRecord(txid: txid, nextTreeID: nextTreeID, liveBytes: liveBytes, trees: trees)
        }

        /// Where a tree entry's fields lie in the payload, for forging one.
        package struct EntryPlace: Equatable, Sendable {
            package var idPosition: Int
            package var nameLengthPosition: Int
            package var rootOffsetPosition: Int
            package var entryCountPosition: Int
            package var heightPosition: Int
            /// Where the next entry begins.
            package var end: Int
        }

        /// The places of the entries of `payload` that lie wholly inside it, in order, by their
        /// name lengths (the tree count is not consulted). No checks: for forging.
        package static func entryPlaces(in payload: [UInt8]) -> [EntryPlace] {
            var places: [EntryPlace] = []
            var start = entriesPosition
            // An entry is at least id (4), name length (2), root (8), count (8), height (1).
            while start + 6 <= payload.count {
                let nameLength = Int(payload.littleEndian(at: start + 4, width: 2))
                let rootOffsetPosition = start + 6 + nameLength
                guard rootOffsetPosition + 17 <= payload.count else { break }
                places.append(EntryPlace(
                    idPosition: start, nameLengthPosition: start + 4, rootOffsetPosition: rootOffsetPosition,
                    entryCountPosition: rootOffsetPosition + 8, heightPosition: rootOffsetPosition + 16,
                    end: rootOffsetPosition + 17))
                start = rootOffsetPosition + 17
            }
            return places
        }
    }
}
