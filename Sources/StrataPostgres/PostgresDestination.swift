import Foundation

/// A PostgreSQL database to replicate to, from a URL as libpq spells it:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=FILE]`.
///
/// The password comes from the URL, else `PGPASSWORD`, else the password file (`PGPASSFILE`,
/// else `~/.pgpass`, lines `host:port:database:user:password`). It is never printed:
/// ``description`` and every error leave it out.
public struct PostgresDestination: Sendable, CustomStringConvertible {
    /// How the connection is encrypted (libpq's `sslmode`).
    public enum TLSMode: String, Sendable {
        /// No TLS.
        case disable
        /// TLS, without checking the server's certificate (libpq's `require`).
        case require
        /// TLS, the certificate checked against `sslrootcert` (or the system's roots) and the
        /// host name (libpq's `verify-full`).
        case verifyFull = "verify-full"
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port (5432 unless the URL says).
    public var port: Int
    /// The user to log in as.
    public var user: String
    /// The database.
    public var database: String
    /// The password, if any source gave one. Not printed.
    public var password: String?
    /// The TLS mode (`disable` unless the URL says).
    public var tls: TLSMode
    /// The certificate file of the authority that signed the server's (`sslrootcert`).
    public var rootCertificatePath: String?

    /// Parses `url`, taking the password from `environment` (`PGPASSWORD`, `PGPASSFILE`,
    /// `HOME`) when the URL has none. Throws ``ReplicationError/invalidURL(reason:)``.
    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let components = URLComponents(string: url),
              let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw ReplicationError.invalidURL(reason: "expected postgres://USER@HOST[:PORT]/DATABASE")
        }
        guard let host = components.host, !host.isEmpty else {
            throw ReplicationError.invalidURL(reason: "no host")
        }
        guard let user = components.user, !user.isEmpty else {
            throw ReplicationError.invalidURL(reason: "no user (postgres://USER@HOST/DATABASE)")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw ReplicationError.invalidURL(reason: "no database (postgres://USER@HOST/DATABASE)")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw ReplicationError.invalidURL(reason: "port \(port) out of range")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.user = user
        self.database = database
        self.tls = .disable
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw ReplicationError.invalidURL(
                        reason: "sslmode '\(item.value ?? "")' (supported: disable, require, verify-full)")
                }
                tls = mode
            case "sslrootcert":
                rootCertificatePath = item.value
            default:
                throw ReplicationError.invalidURL(reason: "unknown parameter '\(item.name)'")
            }
        }
        password = components.password
            ?? environment["PGPASSWORD"]
            ?? PasswordFile(path: environment["PGPASSFILE"] ?? environment["HOME"].map { $0 + "/.pgpass" })
                .password(host: host, port: self.port, database: database, user: user)
    }

    /// The URL without the password.
    public var description: String {
        var text = "postgres://\(user)@\(host):\(port)/\(database)"
        if tls != .disable { text += "?sslmode=\(tls.rawValue)" }
        return text
    }
}
