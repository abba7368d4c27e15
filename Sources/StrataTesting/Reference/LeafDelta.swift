extension ReferenceFormat {
    /// A leaf delta frame's raw payload (FORMAT.md §4, "Leaf deltas"): the offset of a page
    /// frame holding a leaf's image, and the cells changed since, keys strictly ascending.
    ///
    /// ```
    ///  0             8         10
    ///  | base offset | count n | change 0 | … | change n-1 |
    ///    u64           u16
    ///  change: u8 op, then op 1 (put): a leaf cell — u16 k, u32 value info, key, value or u64 offset
    ///                      op 2 (delete): u16 k, key
    /// ```
    ///
    /// The leaf a delta reads as is the base image's cells with each put replacing the cell of
    /// its key or adding one in key order, and each delete removing the cell of its key (or
    /// nothing, when the base holds no such key): ``apply(to:deltaOffset:)``.
    package struct LeafDelta: Equatable, Sendable {
        /// One changed cell.
        package enum Change: Equatable, Sendable {
            /// The cell of its key, as a page holds it (replacing the base's, or added).
            case put(PageImage.LeafCell)
            /// The cell of `key` removed.
            case delete(key: [UInt8])

            /// The key the change is about.
            package var key: [UInt8] {
                switch self {
                case .put(let cell): return cell.key
                case .delete(let key): return key
                }
            }

            /// The op byte.
            package var code: UInt8 {
                switch self {
                case .put: return LeafDelta.putCode
                case .delete: return LeafDelta.deleteCode
                }
            }
        }

        /// Where the base page frame starts.
        package var baseOffset: UInt64
        /// The changes, in the order written (ascending keys in a valid payload).
        package var changes: [Change]

        /// A delta of `changes` to the leaf in the page frame at `baseOffset`.
        package init(baseOffset: UInt64, changes: [Change]) {
            self.baseOffset = baseOffset
            self.changes = changes
        }

        /// The op byte of a put.
        package static let putCode: UInt8 = 1
        /// The op byte of a delete.
        package static let deleteCode: UInt8 = 2
        /// Where the u64 base offset lies in the payload.
        package static let baseOffsetPosition = 0
        /// Where the u16 change count lies in the payload.
        package static let countPosition = 8
        /// Where the first change begins.
        package static let changesPosition = 10

        /// The payload: base offset, change count (`claimedCount` writes another count than
        /// the changes given), then each change. Nothing is checked — keys in any order, a put
        /// whose value info disagrees with its bytes — since forging is what the tools use it for.
        package func encoded(claimedCount: UInt16? = nil) -> [UInt8] {
            var writer = ByteWriter()
            writer.u64(baseOffset)
            writer.u16(claimedCount ?? UInt16(truncatingIfNeeded: changes.count))
            for change in changes {
                writer.u8(change.code)
                switch change {
                case .put(let cell):
                    writer.append(cell.encoded())
                case .delete(let key):
                    writer.u16(UInt16(truncatingIfNeeded: key.count))
                    writer.append(key)
                }
            }
            return writer.bytes
        }

        /// Decodes `payload` for a file of `pageSize`-byte pages and checks every rule FORMAT.md
        /// states about the payload itself: at most `P` bytes (§3: "either is at most `P`"); a
        /// change count of at least 1; exactly that many changes, each whole, and no byte after
        /// the last; op 1 or 2 only; key lengths 1...1024; a put's cell as a page's leaf cell
        /// (value length at most 64 MiB, the inline rule both ways); keys strictly ascending
        /// across all changes (so no key twice, whatever the ops). What needs the file — the
        /// base frame, the offsets against the delta's own, the leaf it reads as — is checked by
        /// ``checkBaseOffset(deltaOffset:)``, ``apply(to:deltaOffset:)`` and
        /// ``resolve(in:deltaFrame:pageSize:)``.
        package static func decode(_ payload: [UInt8], pageSize: Int) throws -> LeafDelta {
            guard payload.count <= pageSize else {
                throw FormatViolation("a leaf delta payload of \(payload.count) bytes, above the page size \(pageSize)")
            }
            var reader = ByteReader(payload)
            let baseOffset = try reader.u64()
            let count = Int(try reader.u16())
            guard count >= 1 else { throw FormatViolation("a leaf delta with no changes") }
            var changes: [Change] = []
            changes.reserveCapacity(count)
            for index in 0..<count {
                let change: Change
                do {
                    change = try next(&reader, pageSize: pageSize)
                } catch let violation as FormatViolation {
                    throw FormatViolation("leaf delta change \(index) of \(count): \(violation)")
                }
                if let previous = changes.last, !ReferenceFormat.keyPrecedes(previous.key, change.key) {
                    throw FormatViolation("leaf delta change \(index): keys not strictly ascending")
                }
                changes.append(change)
            }
            guard reader.isAtEnd else {
                throw FormatViolation("\(reader.remaining) bytes after the last of \(count) leaf delta changes")
            }
            return LeafDelta(baseOffset: baseOffset, changes: changes)
        }

        /// The change at `reader`'s position, checked (see ``decode(_:pageSize:)``).
        private static func next(_ reader: inout ByteReader, pageSize: Int) throws -> Change {
            let code = try reader.u8()
            switch code {
            case putCode:
                return .put(try PageImage.LeafCell.read(&reader, pageSize: pageSize))
            case deleteCode:
                let keyLength = Int(try reader.u16())
                guard (1...ReferenceFormat.maximumKeyLength).contains(keyLength) else {
                    throw FormatViolation("key length \(keyLength)")
                }
                return .delete(key: try reader.bytes(keyLength))
            default:
                throw FormatViolation("unknown op byte \(code) at payload offset \(reader.position - 1)")
            }
        }

        /// §4: the base offset is a multiple of 8, at least 8192, and before the delta frame at
        /// `deltaOffset`.
        package func checkBaseOffset(deltaOffset: Int) throws {
            guard baseOffset >= UInt64(ReferenceFormat.logStart),
                  baseOffset % UInt64(ReferenceFormat.frameAlignment) == 0,
                  baseOffset < UInt64(deltaOffset) else {
                throw FormatViolation("leaf delta at \(deltaOffset): base offset \(baseOffset)")
            }
        }

        /// The cells the delta's changes make of `cells` (a leaf's, in ascending key order):
        /// a put replaces the cell of its key or adds one in key order, a delete removes the
        /// cell of its key, and a delete of a key `cells` lacks changes nothing. Nothing is
        /// checked; both inputs are taken as sorted.
        package func applied(to cells: [PageImage.LeafCell]) -> [PageImage.LeafCell] {
            var result: [PageImage.LeafCell] = []
            result.reserveCapacity(cells.count + changes.count)
            var next = 0
            for change in changes {
                while next < cells.count, ReferenceFormat.keyPrecedes(cells[next].key, change.key) {
                    result.append(cells[next])
                    next += 1
                }
                if next < cells.count, cells[next].key == change.key { next += 1 }
                if case .put(let cell) = change { result.append(cell) }
            }
            result += cells[next...]
            return result
        }

        /// The leaf the delta frame at `deltaOffset` reads as, with `base` the image of the page
        /// frame at ``baseOffset``, as a packed leaf image (``PageImage/leafImage(_:pageSize:)``).
        /// Throws when a rule §4 sets is broken: the base offset (``checkBaseOffset(deltaOffset:)``);
        /// a base that is not a valid leaf image on its own (a branch; a cell that
        /// ``PageImage/validateCells(frameOffset:)`` refuses at the base's offset); and for the
        /// result, every rule of a page image as if it were stored in the delta frame: at most
        /// `P` bytes packed (`8 + 2·count + cell bytes`), the inline rule, overflow offsets
        /// multiples of 8, at least 8192 and before the delta frame. (The bounds a parent cell
        /// sets are the walker's.)
        package func apply(to base: PageImage, deltaOffset: Int) throws -> PageImage {
            try checkBaseOffset(deltaOffset: deltaOffset)
            guard base.isLeaf else {
                throw FormatViolation("leaf delta at \(deltaOffset): the base at \(baseOffset) is a branch")
            }
            let baseCells: [PageImage.LeafCell]
            do {
                try base.validateCells(frameOffset: Int(baseOffset))
                baseCells = try base.leafCells()
            } catch let violation as FormatViolation {
                throw FormatViolation("leaf delta at \(deltaOffset): its base at \(baseOffset): \(violation)")
            }
            let cells = applied(to: baseCells)
            let length = PageImage.leafImageLength(cells)
            guard length <= base.pageSize else {
                throw FormatViolation("leaf delta at \(deltaOffset) reads as a leaf of \(cells.count) cells in "
                                      + "\(length) bytes, above the page size \(base.pageSize)")
            }
            do {
                let leaf = try PageImage(PageImage.leafImage(cells, pageSize: base.pageSize), pageSize: base.pageSize)
                try leaf.validateCells(frameOffset: deltaOffset)
                return leaf
            } catch let violation as FormatViolation {
                throw FormatViolation("leaf delta at \(deltaOffset) reads as a leaf that breaks §4: \(violation)")
            }
        }

        /// A leaf delta read against the file that holds it.
        package struct Resolved: Sendable {
            /// The decoded payload.
            package let delta: LeafDelta
            /// The base page frame (valid, of type page).
            package let base: Frame
            /// The leaf the delta reads as.
            package let leaf: PageImage
        }

        /// Decodes the valid leaf delta frame `deltaFrame` of `file` and reads it as a leaf: its
        /// payload (``decode(_:pageSize:)``), then its base — a valid frame of type page
        /// (never another delta) at the base offset, holding a valid leaf image — then the
        /// leaf (``apply(to:deltaOffset:)``). Any other base is a violation.
        package static func resolve(in file: [UInt8], deltaFrame: Frame, pageSize: Int) throws -> Resolved {
            precondition(deltaFrame.type == .leafDelta, "a \(deltaFrame.type) frame read as a leaf delta")
            let delta: LeafDelta
            do {
                delta = try decode(deltaFrame.payload, pageSize: pageSize)
            } catch let violation as FormatViolation {
                throw FormatViolation("leaf delta at \(deltaFrame.offset): \(violation)")
            }
            try delta.checkBaseOffset(deltaOffset: deltaFrame.offset)
            let base: Frame
            let baseImage: PageImage
            do {
                base = try Frame(in: file, at: Int(delta.baseOffset))
                guard base.type == .page else { throw FormatViolation("a \(base.type) frame, not a page frame") }
                baseImage = try PageImage(base.payload, pageSize: pageSize)
            } catch let violation as FormatViolation {
                throw FormatViolation("leaf delta at \(deltaFrame.offset): base \(delta.baseOffset): \(violation)")
            }
            let leaf = try delta.apply(to: baseImage, deltaOffset: deltaFrame.offset)
            return Resolved(delta: delta, base: base, leaf: leaf)
        }

        /// Where a change lies in a payload, for forging its fields.
        package struct ChangePlace: Equatable, Sendable {
            /// The op byte's position.
            package var opPosition: Int
            /// The op byte found there.
            package var code: UInt8
            /// The u16 key length's position.
            package var keyLengthPosition: Int
            package var keyLength: Int
            /// A put's u32 value info position (nil for any other op).
            package var valueInfoPosition: Int?
            /// A put's u64 overflow offset position, when its value info says overflow.
            package var overflowOffsetPosition: Int?
            /// Where the next change begins.
            package var end: Int
        }

        /// The places of the changes of `payload` (whatever its count says; no checks), in
        /// order, up to the first change that does not lie wholly inside it or has an unknown
        /// op. For forging: a damaged payload still yields the changes that can be found.
        package static func changePlaces(in payload: [UInt8]) -> [ChangePlace] {
            var places: [ChangePlace] = []
            var at = changesPosition
            while at + 3 <= payload.count {
                let code = payload[at]
                let keyLength = Int(payload.littleEndian(at: at + 1, width: 2))
                var place = ChangePlace(opPosition: at, code: code, keyLengthPosition: at + 1, keyLength: keyLength,
                                        valueInfoPosition: nil, overflowOffsetPosition: nil, end: 0)
                switch code {
                case putCode:
                    guard at + 7 <= payload.count else { return places }
                    let valueInfo = UInt32(payload.littleEndian(at: at + 3, width: 4))
                    place.valueInfoPosition = at + 3
                    let valueAt = at + 1 + ReferenceFormat.leafCellHeaderLength + keyLength
                    if valueInfo & ReferenceFormat.overflowBit != 0 {
                        place.overflowOffsetPosition = valueAt
                        place.end = valueAt + 8
                    } else {
                        place.end = valueAt + Int(valueInfo)
                    }
                case deleteCode:
                    place.end = at + 3 + keyLength
                default:
                    return places
                }
                guard place.end <= payload.count else { return places }
                places.append(place)
                at = place.end
            }
            return places
        }
    }
}
