/// Recovery, step 1 (FORMAT.md §2, §8): choosing the header slot.
extension Recovery {
    /// The current header slot, its index and the file's size. A writable open of an unfinished
    /// creation (an empty or all-zero file) initializes it as a new store first.
    static func readHeader(file: any StorageFile, path: String,
                           options: StoreOptions) throws -> (FileHeader, Int, UInt64) {
        var size = try file.size()
        var (header, slot) = try chooseHeader(file: file, path: path, size: size)
        if header == nil {
            // A crash while creating the file leaves it empty or all zeros: start it afresh.
            guard !options.readOnly else { throw StrataError.notAStrataFile(path: path) }
            try file.truncate(to: 0)
            try StoreFileWriter.initialize(file: file, path: path, pageSize: options.pageSize,
                                           fileID: StoreFileWriter.randomFileID())
            size = try file.size()
            (header, slot) = try chooseHeader(file: file, path: path, size: size)
        }
        guard let header else { throw StrataError.notAStrataFile(path: path) }
        guard header.checkpointOffset >= Format.logStart, header.checkpointOffset < size,
              header.durableEnd <= size, header.durableEnd > header.checkpointOffset else {
            throw StrataError.corrupt(
                "header points outside the file (checkpoint \(header.checkpointOffset), "
                    + "durable end \(header.durableEnd), size \(size))",
                offset: FileHeader.slotOffset(slot))
        }
        return (header, slot, size)
    }

    /// The valid header slot with the higher sequence; `nil` header for an all-zero (new) file.
    /// Validates in the order of FORMAT.md §2: magic, checksum, version, fields.
    private static func chooseHeader(file: any StorageFile, path: String, size: UInt64) throws -> (FileHeader?, Int) {
        var states: [FileHeader.SlotState] = []
        var allZero = true
        for slot in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: Format.slotLength)
            let n = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: FileHeader.slotOffset(slot)) }
            if bytes[..<n].contains(where: { $0 != 0 }) { allZero = false }
            states.append(bytes.withUnsafeBytes { FileHeader.decode($0) })
        }
        // A checksum-valid slot of a newer version means a newer writer has had the file, whichever
        // slot it is: what it changed cannot be read by this version.
        for state in states {
            if case .newerVersion(let version) = state {
                throw StrataError.unsupportedFormatVersion(found: version, supported: Format.version)
            }
        }
        // A checksum-valid slot with impossible fields was not torn: it was written so.
        for (i, state) in states.enumerated() {
            if case .invalid(let what) = state {
                throw StrataError.corrupt("header slot \(i): \(what)", offset: FileHeader.slotOffset(i))
            }
        }
        var valid: [(header: FileHeader, slot: Int)] = []
        for (i, state) in states.enumerated() {
            if case .valid(let header) = state { valid.append((header, i)) }
        }
        if valid.count == 2 {
            // Slots are only ever written for the same file: they agree on what never changes.
            let (first, second) = (valid[0].header, valid[1].header)
            guard first.pageSize == second.pageSize, first.fileID == second.fileID else {
                throw StrataError.corrupt("the header slots disagree on page size or file id", offset: 0)
            }
            guard valid[0].header.sequence != valid[1].header.sequence else {
                throw StrataError.corrupt("both header slots have sequence \(valid[0].header.sequence)", offset: 0)
            }
        }
        if let best = valid.max(by: { $0.header.sequence < $1.header.sequence }) { return (best.header, best.slot) }
        if states.contains(.damaged) { throw StrataError.corrupt("no header slot has a valid checksum", offset: 0) }
        if allZero && size <= Format.logStart { return (nil, 0) }
        throw StrataError.notAStrataFile(path: path)
    }
}
