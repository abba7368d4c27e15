import CLibPQ
import Foundation

/// Every call into libpq that passes or reads a C pointer. The rest of the client uses these
/// and never touches a pointer.
///
/// Invariants: a `PGconn` (``LibPQ/Connection``) is used by one thread at a time — its
/// ``PostgresConnection`` calls these only on its serial queue — and is never used after
/// `PQfinish`, which ``PostgresConnection`` calls once and then forgets the handle. A `PGresult`
/// is immutable once returned, so any thread may read it, and ``PostgresResult`` frees it
/// exactly once, when its last reference goes. Cells are read only at a row and column
/// checked against `PQntuples` and `PQnfields` first, and copied out with the length
/// `PQgetlength` gives, so no read leaves libpq's buffer. Parameter pointers point into a
/// buffer kept alive (and unmoved) for the whole `PQexecParams` call, one byte longer than
/// the parameters so that an empty value still has an address (a null pointer is SQL `NULL`).
/// C strings passed in are valid for the call only, and libpq copies what it keeps.
enum LibPQ {
    /// A `PGconn`.
    struct Connection: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Opens a connection with libpq's keyword/value parameters. Returns the connection, or
    /// the error message libpq gave (the connection already freed).
    static func connect(_ parameters: [(String, String)]) -> Result<Connection, ConnectError> {
        var keywords = parameters.map { strdup($0.0) }
        var values = parameters.map { strdup($0.1) }
        keywords.append(nil)
        values.append(nil)
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let connection = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { keywordPointers in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 0)
            }
        }
        guard let connection else { return .failure(ConnectError(message: "out of memory")) }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            return .failure(ConnectError(message: message))
        }
        return .success(Connection(pointer: connection))
    }

    /// libpq's message for a connection that could not be opened.
    struct ConnectError: Error {
        let message: String
    }

    /// Closes and frees `connection`.
    static func finish(_ connection: Connection) {
        PQfinish(connection.pointer)
    }

    /// Whether the connection is still usable.
    static func isOK(_ connection: Connection) -> Bool {
        PQstatus(connection.pointer) == CONNECTION_OK
    }

    /// libpq's last error message on `connection`.
    static func errorMessage(_ connection: Connection) -> String {
        String(cString: PQerrorMessage(connection.pointer))
    }

    /// Runs `sql` with `bindings`, every parameter and result column in binary format. Nil when
    /// libpq could not even make a result (out of memory, or the connection is gone).
    static func execute(_ connection: Connection, sql: String, bindings: PostgresBindings) -> PostgresResult? {
        let count = bindings.count
        // One byte more than the values: an empty value's pointer stays inside the buffer.
        let buffer = bindings.bytes + [0]
        let result = buffer.withUnsafeBufferPointer { base -> OpaquePointer? in
            var values: [UnsafePointer<CChar>?] = []
            values.reserveCapacity(count)
            let start = UnsafeRawPointer(base.baseAddress!)
            for index in 0..<count {
                if bindings.lengths[index] < 0 {
                    values.append(nil)
                } else {
                    values.append((start + bindings.offsets[index]).assumingMemoryBound(to: CChar.self))
                }
            }
            let formats = [Int32](repeating: 1, count: count)
            return PQexecParams(connection.pointer, sql, Int32(count), bindings.types, values, bindings.lengths, formats, 1)
        }
        return result.map(PostgresResult.init)
    }

    /// Runs `sql`, a `COPY … FROM STDIN`, sending `data` as its rows. Returns the statement's
    /// final result (an error result when the server refused the statement or the data), nil
    /// when libpq could not make one. `data` is passed in slices of at most 1 MiB, each valid
    /// for its `PQputCopyData` call (libpq copies it into its own buffer).
    static func copyIn(_ connection: Connection, sql: String, data: [UInt8]) -> PostgresResult? {
        guard let started = PQexec(connection.pointer, sql) else { return nil }
        guard PQresultStatus(started) == PGRES_COPY_IN else { return PostgresResult(started) }
        PQclear(started)
        var sent = true
        data.withUnsafeBytes { bytes in
            var offset = 0
            while sent && offset < bytes.count {
                let length = min(1 << 20, bytes.count - offset)
                let slice = (bytes.baseAddress! + offset).assumingMemoryBound(to: CChar.self)
                sent = PQputCopyData(connection.pointer, slice, Int32(length)) == 1
                offset += length
            }
        }
        guard PQputCopyEnd(connection.pointer, sent ? nil : "the data could not be sent") == 1 else { return nil }
        // The final result, then nil: every result before the last is freed.
        var last: OpaquePointer?
        while let result = PQgetResult(connection.pointer) {
            if let last { PQclear(last) }
            last = result
        }
        return last.map(PostgresResult.init)
    }

    /// Reads what the server sent without waiting; false when the connection failed.
    static func consumeInput(_ connection: Connection) -> Bool {
        PQconsumeInput(connection.pointer) == 1
    }

    /// Takes every notification received so far; returns how many there were.
    static func takeNotifications(_ connection: Connection) -> Int {
        var count = 0
        while let notification = PQnotifies(connection.pointer) {
            PQfreemem(notification)
            count += 1
        }
        return count
    }

    /// Waits up to `milliseconds` for the connection's socket to become readable. Returns
    /// false when it did not (the time ran out, or a signal interrupted the wait); a closed or
    /// failed socket counts as readable, so the read that follows finds out.
    static func waitReadable(_ connection: Connection, milliseconds: Int32) -> Bool {
        let socket = PQsocket(connection.pointer)
        guard socket >= 0 else { return true }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }
}

/// A statement's result: its status, error fields and cells, freed with the last reference.
final class PostgresResult: @unchecked Sendable {
    private let pointer: OpaquePointer

    fileprivate init(_ pointer: OpaquePointer) {
        self.pointer = pointer
        rowCount = Int(PQntuples(pointer))
        columnCount = Int(PQnfields(pointer))
    }

    deinit { PQclear(pointer) }

    /// How many rows and columns it has.
    let rowCount: Int
    let columnCount: Int

    /// Whether the statement succeeded (with or without rows).
    var succeeded: Bool {
        let status = PQresultStatus(pointer)
        return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
    }

    /// The server's error message (`message`) and SQLSTATE code, when the statement failed.
    var error: (message: String, sqlState: String?) {
        let message = PQresultErrorField(pointer, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
        let state = PQresultErrorField(pointer, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        return (message ?? String(cString: PQresultErrorMessage(pointer)), state)
    }

    /// The type OID of `column`, which must be in range.
    func type(ofColumn column: Int) -> UInt32 {
        precondition(column >= 0 && column < columnCount, "column \(column) of \(columnCount)")
        return UInt32(PQftype(pointer, Int32(column)))
    }

    /// The bytes of a cell (nil for `NULL`); `row` and `column` must be in range.
    func bytes(row: Int, column: Int) -> [UInt8]? {
        precondition(row >= 0 && row < rowCount && column >= 0 && column < columnCount,
                     "cell (\(row), \(column)) of \(rowCount) × \(columnCount)")
        let (r, c) = (Int32(row), Int32(column))
        if PQgetisnull(pointer, r, c) == 1 { return nil }
        let length = Int(PQgetlength(pointer, r, c))
        guard length > 0, let value = PQgetvalue(pointer, r, c) else { return [] }
        return Array(UnsafeRawBufferPointer(start: value, count: length))
    }
}
