import CSQLite
import Foundation
@testable import StrataRecords

/// A minimal SQLite connection for the differential tests: statements cached by SQL text,
/// values in and out as the record layer's ``StoredValue``, and Strata's own string functions
/// registered as SQL functions (SQLite's `lower()` folds ASCII only).
final class SQLiteConnection {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// SQLITE_TRANSIENT: SQLite copies the bytes before the call returns.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init() throws {
        guard sqlite3_open(":memory:", &db) == SQLITE_OK, db != nil else { throw Failure(description: "cannot open SQLite") }
        try registerFunction("canonical") { TextFolding.canonical($0) }
        try registerFunction("strata_lower") { TextFolding.lowercase($0) }
        try registerFunction("strata_upper") { TextFolding.uppercase($0) }
    }

    deinit {
        for s in statements.values { sqlite3_finalize(s) }
        sqlite3_close(db)
    }

    /// The three text functions are pure (`SQLITE_DETERMINISTIC`), one text argument each.
    private func registerFunction(_ name: String, _ fold: @escaping @Sendable (String) -> String) throws {
        let box = Unmanaged.passRetained(FoldBox(fold)).toOpaque()
        let rc = sqlite3_create_function_v2(db, name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, box, { ctx, _, args in
            let box = Unmanaged<FoldBox>.fromOpaque(sqlite3_user_data(ctx)!).takeUnretainedValue()
            guard let arg = args?[0], sqlite3_value_type(arg) != SQLITE_NULL, let text = sqlite3_value_text(arg) else {
                sqlite3_result_null(ctx)
                return
            }
            let out = box.fold(String(cString: text))
            sqlite3_result_text(ctx, out, -1, SQLiteConnection.transient)
        }, nil, nil, { p in if let p { Unmanaged<FoldBox>.fromOpaque(p).release() } })
        guard rc == SQLITE_OK else { throw Failure(description: "create_function \(name): \(rc)") }
    }

    /// Runs one or more statements that take no parameters.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            defer { sqlite3_free(message) }
            throw Failure(description: "\(message.map { String(cString: $0) } ?? "error") in: \(sql)")
        }
    }

    /// Runs one statement with `arguments`, returning its rows.
    @discardableResult
    func query(_ sql: String, _ arguments: [StoredValue] = []) throws -> [[StoredValue]] {
        let s = try statement(sql)
        defer { sqlite3_reset(s); sqlite3_clear_bindings(s) }
        for (i, v) in arguments.enumerated() {
            let n = Int32(i + 1)
            switch v {
            case .null: sqlite3_bind_null(s, n)
            case .int(let x): sqlite3_bind_int64(s, n, x)
            case .double(let x): sqlite3_bind_double(s, n, x)
            case .string(let x): sqlite3_bind_text(s, n, x, -1, Self.transient)
            case .bool(let b): sqlite3_bind_int64(s, n, b ? 1 : 0)
            default: throw Failure(description: "cannot bind \(v)")
            }
        }
        var rows: [[StoredValue]] = []
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw Failure(description: "\(String(cString: sqlite3_errmsg(db))) in: \(sql)") }
            var row: [StoredValue] = []
            for c in 0..<sqlite3_column_count(s) {
                switch sqlite3_column_type(s, c) {
                case SQLITE_INTEGER: row.append(.int(sqlite3_column_int64(s, c)))
                case SQLITE_FLOAT: row.append(.double(sqlite3_column_double(s, c)))
                case SQLITE_TEXT: row.append(.string(String(cString: sqlite3_column_text(s, c))))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let s = statements[sql] { return s }
        var s: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &s, nil) == SQLITE_OK, let s else {
            throw Failure(description: "\(String(cString: sqlite3_errmsg(db))) in: \(sql)")
        }
        statements[sql] = s
        return s
    }
}

/// A Swift function handed to SQLite as a SQL function's user data.
private final class FoldBox {
    let fold: @Sendable (String) -> String
    init(_ fold: @escaping @Sendable (String) -> String) { self.fold = fold }
}
