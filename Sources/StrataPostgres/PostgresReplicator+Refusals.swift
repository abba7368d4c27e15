import Foundation
import StrataRecords
import StrataStorage

/// Rows a pull refuses because they break the model (decision 111): a unique value two
/// writers gave at once, or a server application's row that misses a required value or breaks
/// a validation rule. The rest of the pull flows on; the decision is recorded in PostgreSQL
/// (`strata_rejects`) and carried out there before the store commits, so a replicator killed
/// in between decides the same again and finds it done.
///
/// The rule, the same in every store: of two rows holding one unique value, the one with the
/// smaller key keeps it and the other is deleted everywhere (a server's keys, from 2^62, lose
/// to every store's); a row a server inserted that breaks a rule is deleted, a change it made
/// that breaks one is undone (the row's values set back to the store's).
extension PostgresReplicator {
    /// The table of decisions: one row per refused row.
    static let rejectsTable = "strata_rejects"

    /// A row the pull leaves out, as decided.
    struct Refusal {
        var reason: ReplicationRefusal.Reason
        var outcome: ReplicationRefusal.Outcome
        /// A duplicate that lost: deleted in the store too when it holds it.
        var deletesHeldRow: Bool { if case .duplicate = reason { true } else { false } }
    }

    /// The store's commit of a pull broke the model at `rule.row`.
    struct RuleBroken: Error {
        var rule: BrokenRule
        var error: StrataError
    }

    /// Applies the claim, refusing the rows that break the model one at a time (each refusal
    /// carried out in PostgreSQL before the store's next try), and reports them.
    func applyRefusing(_ claim: Claim, current: CurrentRows, after pushed: HistoryToken, since previous: HistoryToken?,
                       insertingNew: Bool,
                       on connection: PostgresConnection, report: inout PullReport) async throws -> AppliedConflicts {
        var refused: [ObjectID: Refusal] = [:]
        let incoming = Set(claim.changes.compactMap { change -> ObjectID? in
            guard schema.tableByEntity[change.table] != nil else { return nil }
            return ObjectID(entity: change.table, primaryKey: UInt64(bitPattern: change.pk))
        })
        while true {
            do {
                return try apply(claim, current: current, after: pushed, since: previous, insertingNew: insertingNew,
                                 refused: refused, report: &report)
            } catch let broken as RuleBroken {
                let (row, refusal) = try decide(broken, incoming: incoming)
                // A row refused before and named again: deciding cannot get further.
                guard refused[row] == nil else { throw rejected(broken) }
                try await carryOut(refusal, of: row, on: connection)
                refused[row] = refusal
                report.refusals.append(ReplicationRefusal(row: row, reason: refusal.reason, outcome: refusal.outcome,
                                                          decidedBy: name))
            }
        }
    }

    /// The error a pull fails with when the broken rule is not one it refuses rows for.
    private func rejected(_ broken: RuleBroken) -> ReplicationError {
        .pullRejected(entity: broken.rule.row.entity, primaryKey: Int64(bitPattern: broken.rule.row.primaryKey),
                      reason: "\(broken.error)")
    }

    /// Which row goes and how. A `deny` rule, or a rule broken by a row the pull did not bring
    /// (a derived value of the store's), fails the pull as before: no rule of this kind says
    /// which side should give.
    func decide(_ broken: RuleBroken, incoming: Set<ObjectID>) throws -> (ObjectID, Refusal) {
        let row = broken.rule.row
        switch broken.rule.rule {
        case .unique(let index):
            guard let holder = broken.rule.holder,
                  let entity = store.model.entities.first(where: { $0.name == row.entity }),
                  index < entity.uniquenessConstraints.count else { throw rejected(broken) }
            let (loser, winner) = row.primaryKey > holder.primaryKey ? (row, holder) : (holder, row)
            return (loser, Refusal(reason: .duplicate(constraint: entity.uniquenessConstraints[index], keptBy: winner),
                                   outcome: .deleted))
        case .validation:
            guard incoming.contains(row) else { throw rejected(broken) }
            let held = try store.read { try $0.values(of: row) } != nil
            return (row, Refusal(reason: .invalid(message: "\(broken.error)"), outcome: held ? .restored : .deleted))
        case .deny:
            throw rejected(broken)
        }
    }

    /// Carries a refusal out in PostgreSQL and records it, in one transaction under this
    /// store's origin (every other store's queue gets the deletion or the restored values).
    func carryOut(_ refusal: Refusal, of row: ObjectID, on connection: PostgresConnection) async throws {
        guard let tableIndex = schema.tableByEntity[row.entity] else { return }
        let table = SQL.name(row.entity)
        let rejects = SQL.name(Self.rejectsTable)
        let stored = try storedRow(row)
        let kind: String, detail: String, keptBy: Int64?
        switch refusal.reason {
        case .duplicate(let constraint, let winner):
            (kind, detail, keptBy) = ("duplicate", constraint.joined(separator: ","), Int64(bitPattern: winner.primaryKey))
        case .invalid(let message):
            (kind, detail, keptBy) = ("invalid", message, nil)
        }
        var bindings = PostgresBindings()
        bindings.append(row.entity)
        bindings.append(Int64(bitPattern: row.primaryKey))
        bindings.append(kind)
        bindings.append(detail)
        bindings.append(keptBy)
        bindings.append(refusal.outcome.rawValue)
        bindings.append(name)
        let columns = "(tbl, pk, kind, detail, kept_by, outcome, decided_by, row)"
        let values = "$1, $2, $3, $4, $5, $6, $7"
        try await inTransaction(on: connection) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext('strata_prepare_pull'))"))
            // A duplicate the store holds: its deletion is recorded for every store, this one
            // included (an origin no store has, for this transaction only), so if the store's
            // commit that deletes it too is lost to a crash, its next pull takes the deletion
            // from its queue — the claim applied again may no longer name the row.
            if refusal.deletesHeldRow && stored != nil {
                try await connection.query(PostgresQuery(
                    unsafeSQL: "SELECT set_config(\(SQL.literal(ReplicationSchema.originSetting)), '-1', true)"))
            }
            try await connection.query(PostgresQuery(unsafeSQL: Self.rejectsTableSQL))
            switch refusal.outcome {
            case .deleted:
                let gone = try await connection.query(PostgresQuery(
                    unsafeSQL: "WITH gone AS (DELETE FROM \(table) AS t WHERE t.pk = $2 RETURNING to_jsonb(t) AS row) "
                        + "INSERT INTO \(rejects) \(columns) SELECT \(values), row FROM gone RETURNING 1",
                    binds: bindings))
                // Held by the store alone (never pushed): recorded with the store's values,
                // unless another store's decision was recorded first.
                if gone.count == 0, let stored {
                    var more = bindings
                    more.append(Self.json(stored.values.merging(
                        stored.toOneTargets.mapValues { $0.map { .int(Int64(bitPattern: $0.primaryKey)) } ?? .null }) { a, _ in a }))
                    try await connection.query(PostgresQuery(
                        unsafeSQL: "INSERT INTO \(rejects) \(columns) SELECT \(values), $8::jsonb WHERE NOT EXISTS "
                            + "(SELECT 1 FROM \(rejects) WHERE tbl = $1 AND pk = $2 AND kind = $3)",
                        binds: more))
                }
            case .restored:
                try await connection.query(PostgresQuery(
                    unsafeSQL: "INSERT INTO \(rejects) \(columns) SELECT \(values), to_jsonb(t) FROM \(table) AS t "
                        + "WHERE t.pk = $2", binds: bindings))
                guard let stored else { return }
                var batch = BatchStatements(schema: schema, guardsMissingRows: true)
                var change = stored
                // Every column the pull reads goes back, nil ones included.
                for column in schema.tables[tableIndex].columns where column.name != "pk" && column.target == nil
                    && change.values[column.name] == nil {
                    change.values[column.name] = .null
                }
                batch.add([change])
                for query in try batch.statements().queries { try await connection.query(query) }
            }
        }
    }

    /// The store's row `id` as an update of every column (nil when the store does not hold it).
    func storedRow(_ id: ObjectID) throws -> HistoryChange? {
        guard let index = schema.tableByEntity[id.entity] else { return nil }
        return try store.read { reader in
            guard let values = try reader.values(of: id) else { return nil }
            var targets: [String: ObjectID?] = [:]
            for column in schema.tables[index].columns where column.target != nil {
                targets[column.name] = try reader.target(of: column.name, of: id)
            }
            let derived = Set(schema.tables[index].columns.filter(\.isDerived).map(\.name))
            return HistoryChange(kind: .update, id: id, values: values, derivedNames: derived, toOneTargets: targets)
        }
    }

    /// The refusals recorded in PostgreSQL, oldest first (none when no pull ever refused a row).
    public func refusals() async throws -> [ReplicationRefusal] {
        let connection = try await connect()
        defer { connection.close() }
        return try await run(on: connection) { connection in
            guard try await Self.exists(Self.rejectsTable, on: connection) else { return [] }
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT tbl, pk, kind, detail, kept_by, outcome, decided_by, row::text, at "
                    + "FROM \(SQL.name(Self.rejectsTable)) ORDER BY id"))
            var refusals: [ReplicationRefusal] = []
            for cells in rows {
                let entity = try cells[0].decode(String.self)
                let pk = try cells[1].decode(Int64.self)
                let detail = try cells[3].decode(String.self)
                let reason: ReplicationRefusal.Reason
                if try cells[2].decode(String.self) == "duplicate", let winner = try cells[4].decode(Int64?.self) {
                    reason = .duplicate(constraint: detail.split(separator: ",").map(String.init),
                                        keptBy: ObjectID(entity: entity, primaryKey: UInt64(bitPattern: winner)))
                } else {
                    reason = .invalid(message: detail)
                }
                refusals.append(ReplicationRefusal(
                    row: ObjectID(entity: entity, primaryKey: UInt64(bitPattern: pk)), reason: reason,
                    outcome: ReplicationRefusal.Outcome(rawValue: try cells[5].decode(String.self)) ?? .deleted,
                    decidedBy: try cells[6].decode(String.self), values: try cells[7].decode(String?.self),
                    date: try cells[8].decode(Date?.self)))
            }
            return refusals
        }
    }

    static let rejectsTableSQL = """
        CREATE TABLE IF NOT EXISTS \(SQL.name(rejectsTable)) (id bigserial PRIMARY KEY, tbl text NOT NULL, \
        pk bigint NOT NULL, kind text NOT NULL, detail text NOT NULL, kept_by bigint, outcome text NOT NULL, \
        decided_by text NOT NULL, row jsonb, at timestamptz NOT NULL DEFAULT now())
        """

    /// A row's values as a JSON object, as PostgreSQL's `to_jsonb` writes a row near enough for
    /// a person: numbers and booleans as such, dates in ISO 8601, bytes in base 64.
    static func json(_ values: [String: StoredValue]) -> String {
        var object: [String: Any] = [:]
        for (name, value) in values {
            switch value {
            case .null: object[name] = NSNull()
            case .bool(let value): object[name] = value
            case .int(let value): object[name] = value
            case .double(let value): object[name] = value.isFinite ? value : "\(value)" as Any
            case .decimal(let value): object[name] = "\(value)"
            case .string(let value): object[name] = value
            case .date(let value): object[name] = ISO8601DateFormatter().string(from: value)
            case .uuid(let value): object[name] = value.uuidString.lowercased()
            case .binary(let value): object[name] = Data(value).base64EncodedString()
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
