/// Why replication to or from PostgreSQL failed. Nothing is half-applied on either side: each
/// Strata transaction is applied whole within one PostgreSQL transaction that stores the token
/// of the last one applied, and a pull's changes stay in PostgreSQL until the store has
/// committed them, so a run that failed resumes where it stopped.
public enum ReplicationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection URL does not parse, or names something unsupported (`reason` says what).
    /// The password is never part of `reason`.
    case invalidURL(reason: String)
    /// The server could not be reached, or the connection dropped (`reason` says how).
    case connectionFailed(reason: String)
    /// The server refused the login of `user` to `database`.
    case loginRefused(user: String, database: String, reason: String)
    /// A table the replication needs exists with another shape.
    case tableInTheWay(table: String, reason: String)
    /// The store records no persistent history: replication reads its commits from there.
    case historyNotRecorded
    /// The replication tables hold another store's model.
    case modelMismatch(reason: String)
    /// The server refused a statement (`sqlState` is PostgreSQL's error code).
    case server(message: String, sqlState: String?)
    /// The store refused what a pull brought from PostgreSQL in a way no row can be left out
    /// for (a value of the wrong type, a `deny` delete rule, a rule a value the store derived
    /// breaks): nothing of that pull was applied, and the changes stay in PostgreSQL's change
    /// table until the rows there are fixed. A row that breaks a uniqueness constraint, a
    /// required value or a validation rule is refused alone (``ReplicationRefusal``).
    case pullRejected(entity: String, primaryKey: Int64?, reason: String)
    /// The store cannot join the dataset under replication name `name` (`reason` says why: it
    /// holds rows of its own while other stores write to the dataset, so their keys could
    /// collide; or the name was retired). Nothing was written to either side.
    case joinRefused(name: String, reason: String)
    /// ``PostgresReplicator/leave()`` did not retire the store: it kept committing through
    /// every push meant to be its last.
    case leaveRefused(name: String, reason: String)
    /// ``PostgresReplicator/leave()`` retired the store while it committed: its last
    /// `transactions` transactions are in the store only (stop a store's writers before it
    /// leaves; a store that kept committing through every attempt is not retired at all).
    case leftWithUnpushedWrites(name: String, transactions: Int)

    /// What went wrong, for a person (never a password or a row's values).
    public var description: String {
        switch self {
        case .invalidURL(let reason): return "invalid PostgreSQL URL: \(reason)"
        case .connectionFailed(let reason): return "the connection to the PostgreSQL server failed: \(reason)"
        case .loginRefused(let user, let database, let reason):
            return "the server refused the login of \(user) to \(database): \(reason)"
        case .tableInTheWay(let table, let reason): return "table \(table) is in the way: \(reason)"
        case .historyNotRecorded:
            return "the store records no persistent history (open it with history .on, as a ModelContainer does by default)"
        case .modelMismatch(let reason): return "the PostgreSQL tables hold another model: \(reason)"
        case .server(let message, let sqlState): return "PostgreSQL: \(message)" + (sqlState.map { " (\($0))" } ?? "")
        case .pullRejected(let entity, let primaryKey, let reason):
            return "the store refused \(entity)\(primaryKey.map { " \($0)" } ?? "") from PostgreSQL: \(reason)"
        case .joinRefused(let name, let reason):
            return "the store cannot join the dataset as '\(name)': \(reason)"
        case .leaveRefused(let name, let reason):
            return "the store '\(name)' did not leave the dataset: \(reason)"
        case .leftWithUnpushedWrites(let name, let transactions):
            return "'\(name)' left the dataset while it committed: its last \(transactions) transaction"
                + (transactions == 1 ? " is" : "s are") + " in the store only"
        }
    }
}
