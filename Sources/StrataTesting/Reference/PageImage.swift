extension ReferenceFormat {
    /// A page image (FORMAT.md §4): the raw payload of a page frame, a `P`-byte page with its
    /// free gap cut out.
    ///
    /// ```
    ///  0      1       2       4           6            8
    ///  | kind | level | count | cellStart | fragmented | slot 0 | … | slot count-1 | cells… |
    ///    u8     u8      u16     u16         u16          u16 each                    packed
    /// ```
    ///
    /// Slots hold offsets in the *expanded* page (`cellStart ≤ slot < P`); in the image, the
    /// cell of slot value `s` lies at `8 + 2·count + (s − cellStart)`.
    package struct PageImage: Sendable {
        /// The image as stored in the frame (`L` bytes).
        package let bytes: [UInt8]
        /// The page size `P` of the file.
        package let pageSize: Int
        /// ``ReferenceFormat/leafKind`` or ``ReferenceFormat/branchKind``.
        package let kind: UInt8
        /// 0 for a leaf; a branch's children are one level lower.
        package let level: Int
        /// Number of cells (and slots).
        package let count: Int
        /// Where the cells begin in the expanded page.
        package let cellStart: Int

        /// Where each header field lies in an image (for forging one).
        package enum Field: CaseIterable, Sendable {
            case kind, level, count, cellStart, fragmented

            package var offset: Int {
                switch self {
                case .kind: return 0
                case .level: return 1
                case .count: return 2
                case .cellStart: return 4
                case .fragmented: return 6
                }
            }

            package var width: Int { self == .kind || self == .level ? 1 : 2 }
        }

        /// Decodes and checks the header of `image` for pages of `pageSize` bytes: a known kind;
        /// a level below 32 that is 0 exactly for a leaf; a branch has a cell; `8 + 2·count ≤ L
        /// ≤ P`; `cellStart = P − (L − 8 − 2·count)`; `fragmented` is 0. Cells are checked as
        /// they are read (``leafCell(_:)``, ``branchCell(_:)``, ``validateCells(frameOffset:)``).
        package init(_ image: [UInt8], pageSize: Int) throws {
            guard image.count >= ReferenceFormat.pageHeaderLength else {
                throw FormatViolation("a page image of \(image.count) bytes is shorter than its header")
            }
            bytes = image
            self.pageSize = pageSize
            kind = image[Field.kind.offset]
            level = Int(image[Field.level.offset])
            count = Int(image.littleEndian(at: Field.count.offset, width: 2))
            cellStart = Int(image.littleEndian(at: Field.cellStart.offset, width: 2))
            guard kind == ReferenceFormat.leafKind || kind == ReferenceFormat.branchKind else {
                throw FormatViolation("page kind \(kind)")
            }
            guard level < ReferenceFormat.maximumHeight else { throw FormatViolation("page level \(level)") }
            guard (kind == ReferenceFormat.leafKind) == (level == 0) else {
                throw FormatViolation("a \(kind == ReferenceFormat.leafKind ? "leaf" : "branch") at level \(level)")
            }
            guard kind == ReferenceFormat.leafKind || count >= 1 else {
                throw FormatViolation("a branch with no cells")
            }
            guard slotsEnd <= image.count, image.count <= pageSize else {
                throw FormatViolation("a page image of \(image.count) bytes with \(count) slots, page size \(pageSize)")
            }
            guard cellStart == pageSize - (image.count - slotsEnd) else {
                throw FormatViolation(
                    "cellStart \(cellStart), but P − (L − 8 − 2·count) = \(pageSize - (image.count - slotsEnd))")
            }
            let fragmented = image.littleEndian(at: Field.fragmented.offset, width: 2)
            guard fragmented == 0 else { throw FormatViolation("fragmented \(fragmented) in an image") }
        }

        /// Whether the page is a leaf.
        package var isLeaf: Bool { kind == ReferenceFormat.leafKind }
        /// Where the slot array ends and the packed cells begin, in the image.
        package var slotsEnd: Int { ReferenceFormat.pageHeaderLength + 2 * count }

        /// Where slot `index` lies in an image.
        package static func slotPosition(_ index: Int) -> Int { ReferenceFormat.pageHeaderLength + 2 * index }

        /// Slot `index`'s value: its cell's offset in the expanded page.
        package func slot(_ index: Int) -> Int {
            precondition(index >= 0 && index < count, "slot \(index) of \(count)")
            return Int(bytes.littleEndian(at: PageImage.slotPosition(index), width: 2))
        }

        /// The `P`-byte page the image expands to: bytes `0..<8+2·count` at the start, the rest
        /// at `cellStart`, zeros between.
        package func expanded() -> [UInt8] {
            var page = [UInt8](repeating: 0, count: pageSize)
            page.replaceSubrange(0..<slotsEnd, with: bytes[0..<slotsEnd])
            page.replaceSubrange(cellStart..<pageSize, with: bytes[slotsEnd...])
            return page
        }

        /// A reader of the cell slot `index` points at, bounded by the end of the page (§4: a
        /// cell lies wholly inside `cellStart..<P`); throws when the slot points outside.
        private func cellReader(_ index: Int) throws -> ByteReader {
            let offset = slot(index)
            guard offset >= cellStart, offset < pageSize else {
                throw FormatViolation("slot \(index) = \(offset) lies outside the cells \(cellStart)..<\(pageSize)")
            }
            return ByteReader(bytes, from: slotsEnd + (offset - cellStart))
        }

        /// A leaf cell's value: its bytes, or where its overflow frame is.
        package enum Value: Equatable, Sendable {
            case inline([UInt8])
            /// The offset of the overflow frame holding the value.
            case overflow(UInt64)
        }

        /// One leaf cell: `u16 k`, `u32` value info (bit 31: overflow; bits 0–30: `v`), the key,
        /// then the value or the u64 offset of its overflow frame.
        package struct LeafCell: Equatable, Sendable {
            package var key: [UInt8]
            /// `v`: the value's length, inline or in the overflow frame.
            package var valueLength: Int
            package var value: Value

            /// A cell of `key` and `value` (`valueLength` bytes).
            package init(key: [UInt8], valueLength: Int, value: Value) {
                self.key = key
                self.valueLength = valueLength
                self.value = value
            }

            /// Where the value info lies from the cell's start.
            package static let valueInfoOffset = 2
            /// Where the key lies from the cell's start (the value or reference follows it).
            package static let keyOffset = ReferenceFormat.leafCellHeaderLength

            /// The cell at `reader`'s position, for pages of `pageSize` bytes, checked: key length
            /// 1...1024, value length at most 64 MiB, the inline rule (`6 + k + v ≤ P / 4` exactly
            /// when inline), every field inside the reader's bytes. A page's cells and a leaf
            /// delta's puts are read alike (§4: a put is "a leaf cell exactly as in a page").
            package static func read(_ reader: inout ByteReader, pageSize: Int) throws -> LeafCell {
                let keyLength = Int(try reader.u16())
                let valueInfo = try reader.u32()
                guard (1...ReferenceFormat.maximumKeyLength).contains(keyLength) else {
                    throw FormatViolation("key length \(keyLength)")
                }
                let isOverflow = valueInfo & ReferenceFormat.overflowBit != 0
                let valueLength = Int(valueInfo & ~ReferenceFormat.overflowBit)
                guard valueLength <= ReferenceFormat.maximumValueLength else {
                    throw FormatViolation("value length \(valueLength)")
                }
                let isInline = ReferenceFormat.isInline(keyLength: keyLength, valueLength: valueLength,
                                                        pageSize: pageSize)
                guard isOverflow != isInline else {
                    let stored = isOverflow ? "in an overflow frame" : "inline"
                    throw FormatViolation("a \(valueLength)-byte value under a \(keyLength)-byte key "
                                          + "stored \(stored), §4's rule says otherwise")
                }
                let key = try reader.bytes(keyLength)
                let value: Value = isOverflow ? .overflow(try reader.u64()) : .inline(try reader.bytes(valueLength))
                return LeafCell(key: key, valueLength: valueLength, value: value)
            }
        }

        /// Leaf cell `index`, checked as ``LeafCell/read(_:pageSize:)`` checks a cell, and inside
        /// the page.
        package func leafCell(_ index: Int) throws -> LeafCell {
            precondition(isLeaf, "leaf cell \(index) of a branch")
            var reader = try cellReader(index)
            do {
                return try LeafCell.read(&reader, pageSize: pageSize)
            } catch let violation as FormatViolation {
                throw FormatViolation("leaf cell \(index): \(violation)")
            }
        }

        /// Every cell of a leaf, in slot order, each checked as ``leafCell(_:)`` checks it (key
        /// order is ``validateCells(frameOffset:)``'s).
        package func leafCells() throws -> [LeafCell] {
            try (0..<count).map { try leafCell($0) }
        }

        /// One branch cell: `u16 k`, the u64 offset of the child's page frame, the key.
        package struct BranchCell: Equatable, Sendable {
            /// Empty for cell 0, which has no lower bound.
            package var key: [UInt8]
            package var child: UInt64

            /// A cell of `key` pointing at the page frame at `child`.
            package init(key: [UInt8], child: UInt64) {
                self.key = key
                self.child = child
            }

            /// Where the child offset lies from the cell's start.
            package static let childOffset = 2
        }

        /// Branch cell `index`, checked: key length 0 for cell 0 and 1...1024 for the others, the
        /// cell inside the page.
        package func branchCell(_ index: Int) throws -> BranchCell {
            precondition(!isLeaf, "branch cell \(index) of a leaf")
            var reader = try cellReader(index)
            let keyLength = Int(try reader.u16())
            guard keyLength <= ReferenceFormat.maximumKeyLength, (index == 0) == (keyLength == 0) else {
                throw FormatViolation("branch cell \(index): key length \(keyLength)")
            }
            let child = try reader.u64()
            return BranchCell(key: try reader.bytes(keyLength), child: child)
        }

        /// Everything §4 asks of a page on its own, for the page frame at `frameOffset`: every
        /// cell (as ``leafCell(_:)`` and ``branchCell(_:)`` check them), keys strictly ascending
        /// (a branch's from cell 1 on), every child and overflow offset a multiple of 8, at
        /// least 8192 and below `frameOffset`, and no child twice.
        package func validateCells(frameOffset: Int) throws {
            var previousKey: [UInt8]?
            var children = Set<UInt64>()
            func checkOffset(_ offset: UInt64, _ what: String) throws {
                guard offset >= UInt64(ReferenceFormat.logStart), offset % UInt64(ReferenceFormat.frameAlignment) == 0,
                      offset < UInt64(frameOffset) else {
                    throw FormatViolation("\(what) \(offset) in the page at \(frameOffset)")
                }
            }
            for index in 0..<count {
                let key: [UInt8]
                if isLeaf {
                    let cell = try leafCell(index)
                    key = cell.key
                    if case .overflow(let offset) = cell.value {
                        try checkOffset(offset, "cell \(index): overflow offset")
                    }
                } else {
                    let cell = try branchCell(index)
                    key = cell.key
                    try checkOffset(cell.child, "cell \(index): child offset")
                    guard children.insert(cell.child).inserted else {
                        throw FormatViolation("child \(cell.child) twice in the page at \(frameOffset)")
                    }
                    if index == 0 { continue }
                }
                if let previousKey, !ReferenceFormat.keyPrecedes(previousKey, key) {
                    throw FormatViolation("cell \(index): keys not strictly ascending in the page at \(frameOffset)")
                }
                previousKey = key
            }
        }

        /// Where a cell lies in an image, for forging its fields.
        package struct CellPlace: Equatable, Sendable {
            /// The position of the cell's slot.
            package var slotPosition: Int
            /// The position of the cell's first byte (its key length).
            package var cellPosition: Int
            package var keyLength: Int
        }

        /// The places of the cells of `image` (whatever its header says; no checks), in slot
        /// order, leaving out any cell whose slot or fixed fields do not lie inside the image. For
        /// forging: a damaged image still yields the cells that can be found.
        package static func cellPlaces(in image: [UInt8]) -> [CellPlace] {
            guard image.count >= ReferenceFormat.pageHeaderLength else { return [] }
            let count = Int(image.littleEndian(at: Field.count.offset, width: 2))
            let cellStart = Int(image.littleEndian(at: Field.cellStart.offset, width: 2))
            let slotsEnd = slotPosition(count)
            let cellHeaderLength = image[Field.kind.offset] == ReferenceFormat.branchKind
                ? ReferenceFormat.branchCellHeaderLength : ReferenceFormat.leafCellHeaderLength
            var places: [CellPlace] = []
            for index in 0..<count where slotPosition(index) + 2 <= image.count {
                let slot = Int(image.littleEndian(at: slotPosition(index), width: 2))
                let cellPosition = slotsEnd + (slot - cellStart)
                guard slot >= cellStart, cellPosition + cellHeaderLength <= image.count else { continue }
                places.append(CellPlace(slotPosition: slotPosition(index), cellPosition: cellPosition,
                                        keyLength: Int(image.littleEndian(at: cellPosition, width: 2))))
            }
            return places
        }
    }
}

/// Bytes that break a rule of FORMAT.md, with the rule and where.
package struct FormatViolation: Error, CustomStringConvertible, Sendable {
    package let description: String

    /// A violation described by `description` (what was found, and where).
    package init(_ description: String) { self.description = description }
}
