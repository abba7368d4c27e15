/// The keys a leaf's versions changed since its origin (``Page/changeLog``), shared by them:
/// each version owns a prefix (``Page/changedLength``), and only the writer's copy of the leaf
/// appends. A later version's prefix extends an earlier one's, so one log serves a leaf from its
/// first change after a checkpoint until it is written: a key list per version cost a copy of
/// the list per transaction that changed the leaf, and a list in a class cost two allocations
/// per leaf (decision 103). Bytes past a version's prefix are an abandoned transaction's; the
/// next append from that version writes over them. Only the writer touches a log, under the
/// writer gate as checkpoints are; readers never do.
///
/// Invariants that keep the raw access here inside the log's memory:
///
/// - **Lifetime and size.** The bytes are the tail allocation of this `ManagedBuffer`, made by
///   ``make(capacity:)`` with room for at least `capacity` bytes (the header's `room`, the
///   allocation's own capacity) and freed with the object; they never move. The header's
///   `used` is the end of the last append (every byte before it written), at most `room`.
/// - **Bounds.** ``append(_:after:)`` writes at `length..<length + 2 + key.count` only after
///   checking that this is within `room`; ``grown(_:keeping:toAppend:)`` makes a log with
///   room and copies the first `length` bytes of the old one, which are written (`length ≤
///   used`, checked by `precondition`). ``prefix(_:)`` reads `0..<length` with `length ≤ used`,
///   checked the same way.
/// - **No sharing across threads.** The writer gate orders every access (see above).
final class ChangedKeyLog: ManagedBuffer<ChangedKeyLog.Header, UInt8> {
    /// The bytes written and the room, read once from the allocation (`capacity` asks the
    /// allocator each time).
    struct Header {
        var used: Int
        let room: Int
    }

    /// The bytes written and the room, read through the header's pointer: `header` is a stored
    /// property of a class, and every access to it was checked for exclusivity at run time (a
    /// `swift_beginAccess` call per recorded key; decision 105).
    @inline(__always)
    private var stored: Header { withUnsafeMutablePointerToHeader { $0.pointee } }

    /// A log with room for `capacity` bytes, none written.
    static func make(capacity: Int) -> ChangedKeyLog {
        // `create` makes an instance of the class it is called on.
        create(minimumCapacity: capacity) { Header(used: 0, room: $0.capacity) } as! ChangedKeyLog
    }

    /// Appends `key` as a key list entry (its u16 length, then its bytes) after the first
    /// `length` bytes, writing over what followed them (an abandoned transaction's); false,
    /// nothing written, when the log has no room for it.
    @inline(__always)
    func append(_ key: UnsafeRawBufferPointer, after length: Int) -> Bool {
        // A version's prefix was written by its appends: it ends at or before the last one's end.
        let state = stored
        precondition(length >= 0 && length <= state.used, "a version's prefix is longer than its log")
        let needed = length + 2 + key.count
        guard needed <= state.room else { return false }
        withUnsafeMutablePointers { used, bytes in
            bytes[length] = UInt8(truncatingIfNeeded: key.count)
            bytes[length + 1] = UInt8(truncatingIfNeeded: key.count >> 8)
            if let base = key.baseAddress {
                UnsafeMutableRawPointer(bytes + length + 2).copyMemory(from: base, byteCount: key.count)
            }
            used.pointee.used = needed
        }
        return true
    }

    /// A new log, twice as large as `log` (or 64 bytes) and at least large enough, holding
    /// `log`'s first `length` bytes, then `key`: for a version whose log is full (or which has
    /// none yet; `length` is then 0). Earlier versions keep the old log.
    static func grown(_ log: ChangedKeyLog?, keeping length: Int,
                      toAppend key: UnsafeRawBufferPointer) -> ChangedKeyLog {
        let target = make(capacity: max(length + 2 + key.count, 2 * (log?.stored.room ?? 32)))
        if let log, length > 0 {
            precondition(length <= log.stored.used, "a version's prefix is longer than its log")
            log.withUnsafeMutablePointerToElements { source in
                target.withUnsafeMutablePointerToElements { $0.initialize(from: source, count: length) }
            }
            target.withUnsafeMutablePointerToHeader { $0.pointee.used = length }
        }
        let written = target.append(key, after: length)
        precondition(written, "a log made for the key holds it")
        return target
    }

    /// The first `length` bytes (a version's prefix) as a key list.
    func prefix(_ length: Int) -> [UInt8] {
        precondition(length >= 0 && length <= stored.used, "a version's prefix is longer than its log")
        return withUnsafeMutablePointerToElements { [UInt8](UnsafeBufferPointer(start: $0, count: length)) }
    }
}
