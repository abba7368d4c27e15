/// Recovery, step 1 (FORMAT.md §2, §8): choosing the header slot.
extension Recovery {
    /// The current header slot, its index and the file's size. A writable open of an unfinished
    /// creation (an empty or all-zero file) initializes it as a new store first.
    static func readHeader(file: any StorageFile, path: String, options: StoreOptions) throws -> (FileHeader, Int, UInt64) {
        var size = try file.size()
        var (header, slot) = try chooseHeader(file: file, path: path, size: size)
        if header == nil {
            // A crash while creating the file leaves it empty or all zeros: start it afresh.
            guard !options.readOnly else { throw StrataError.notAStrataFile(path: path) }
            try file.truncate(to: 0)
            try StoreFileWriter.initialize(file: file, path: path, pageSize: options.pageSize, fileID: StoreFileWriter.randomFileID())
            size = try file.size()
            (header, slot) = try chooseHeader(file: file, path: path, size: size)
        }
        guard let header else { throw StrataError.notAStrataFile(path: path) }
        let pageSize = Int(header.pageSize)
        guard pageSize >= 4096, pageSize <= Format.maxPageSize, pageSize & (pageSize - 1) == 0 else {
            throw StrataError.corrupt("header page size \(pageSize)", offset: 0)
        }
        guard header.checkpointOffset >= Format.logStart, header.checkpointOffset < size,
              header.durableEnd <= size, header.durableEnd > header.checkpointOffset else {
            throw StrataError.corrupt("header points outside the file (checkpoint \(header.checkpointOffset), durable end \(header.durableEnd), size \(size))", offset: 0)
        }
        return (header, slot, size)
    }

    /// The valid header slot with the higher sequence; `nil` header for an all-zero (new) file.
    private static func chooseHeader(file: any StorageFile, path: String, size: UInt64) throws -> (FileHeader?, Int) {
        var states: [FileHeader.SlotState] = []
        var allZero = true
        for slot in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: Format.slotLength)
            let n = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: FileHeader.slotOffset(slot)) }
            if bytes[..<n].contains(where: { $0 != 0 }) { allZero = false }
            states.append(bytes.withUnsafeBytes { FileHeader.decode($0) })
        }
        var best: (FileHeader, Int)?
        for (i, s) in states.enumerated() {
            if case .valid(let h) = s, best == nil || h.sequence > best!.0.sequence { best = (h, i) }
        }
        if let best { return (best.0, best.1) }
        for s in states {
            if case .newerVersion(let v) = s { throw StrataError.unsupportedFormatVersion(found: v, supported: Format.version) }
        }
        if states.contains(.damaged) { throw StrataError.corrupt("both header slots are damaged", offset: 0) }
        if allZero && size <= Format.logStart { return (nil, 0) }
        throw StrataError.notAStrataFile(path: path)
    }
}
