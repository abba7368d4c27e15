import Foundation
import StrataRecords

/// A row a pull refused because it broke the store's model, and what became of it
/// (decision 111). Every store decides the same way from the rows alone, so the dataset
/// converges whichever store decided first; PostgreSQL keeps a record of each decision in the
/// `strata_rejects` table, with the refused row's values.
public struct ReplicationRefusal: Sendable, Equatable, CustomStringConvertible {
    /// Why the row was refused.
    public enum Reason: Sendable, Equatable {
        /// Another row holds the same values of the uniqueness constraint `constraint` (two
        /// writers gave them at once): the row with the smaller key, `keptBy`, keeps them, and
        /// this one was deleted in every store and in PostgreSQL.
        case duplicate(constraint: [String], keptBy: ObjectID)
        /// The row breaks a required value, an integer range or a validation rule (`message`
        /// says which): a row a server application inserted so was deleted, a change it made
        /// to a row was undone.
        case invalid(message: String)
    }

    /// What became of the refused row.
    public enum Outcome: String, Sendable, Equatable {
        /// Deleted everywhere (a duplicate, or a row inserted in PostgreSQL that breaks the model).
        case deleted
        /// Its values in PostgreSQL were set back to the store's (a change that broke the model).
        case restored
    }

    /// The row refused.
    public var row: ObjectID
    /// Why.
    public var reason: Reason
    /// What became of it.
    public var outcome: Outcome
    /// The replication name of the store that decided.
    public var decidedBy: String
    /// The row's values when it was refused, as a JSON object of column names (nil when none
    /// were recorded).
    public var values: String?
    /// When PostgreSQL recorded the decision (nil in a pull's own report).
    public var date: Date?

    /// Creates a refusal.
    public init(row: ObjectID, reason: Reason, outcome: Outcome, decidedBy: String, values: String? = nil,
                date: Date? = nil) {
        self.row = row
        self.reason = reason
        self.outcome = outcome
        self.decidedBy = decidedBy
        self.values = values
        self.date = date
    }

    /// The refusal, for a person: the row, why, and what became of it.
    public var description: String {
        let why: String
        switch reason {
        case .duplicate(let constraint, let keptBy):
            why = "duplicate of \(keptBy) in (\(constraint.joined(separator: ", ")))"
        case .invalid(let message):
            why = message
        }
        return "\(row) refused by \(decidedBy): \(why); \(outcome.rawValue)"
    }
}
