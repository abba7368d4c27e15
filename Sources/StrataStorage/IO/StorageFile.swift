/// One open file. All of Strata's file I/O goes through this protocol, so that tests can
/// substitute a simulated file that loses unsynced writes on a simulated crash
/// (LevelDB's `Env`, bbolt's failpoints).
///
/// Implementations must be safe to call from several threads at once: positioned reads
/// (`read(into:at:)`) run concurrently with each other and with appends.
public protocol StorageFile: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (fewer only at
    /// end of file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
    /// Writes all of `bytes` at `offset`, extending the file if needed.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
    /// Makes every write so far durable (`fdatasync`).
    func sync() throws
    /// The file's current length in bytes.
    func size() throws -> UInt64
    /// Sets the file's length, cutting or zero-extending it.
    func truncate(to length: UInt64) throws
    /// Closes the file; later calls fail.
    func close()
    /// A hint: start writing `length` bytes at `offset` to the device now, without waiting
    /// (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so a later ``sync()`` has less left
    /// to wait for. Durability still comes only from `sync()`; errors surface there.
    func startWriteback(at offset: UInt64, length: UInt64)
    /// Which file this is (see ``FileSystem/identity(of:)``), `nil` when it cannot tell.
    var identity: FileIdentity? { get }
}

extension StorageFile {
    /// No hint: `sync()` writes everything back.
    public func startWriteback(at offset: UInt64, length: UInt64) {}

    /// Cannot tell: `nil`.
    public var identity: FileIdentity? { nil }
}

extension StorageFile {
    /// Reads exactly `buffer.count` bytes or throws `corrupt` (the file is shorter than a
    /// structure inside it claims).
    func readExactly(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        let n = try read(into: buffer, at: offset)
        guard n == buffer.count else {
            throw StrataError.corrupt("read of \(buffer.count) bytes past end of file", offset: offset)
        }
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }
}
