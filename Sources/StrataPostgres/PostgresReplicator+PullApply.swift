import Foundation
import StrataRecords
import StrataStorage

/// A pull's second half: PostgreSQL's rows as they are now, applied to the store under the
/// conflict rule, then the claim finished.
extension PostgresReplicator {
    /// A value read from a replicated column.
    enum PulledValue: Equatable {
        case stored(StoredValue)
        case target(Int64?)
    }

    /// The claimed rows and links as PostgreSQL holds them now (absent: deleted there).
    struct CurrentRows {
        var rows: [String: [Int64: [String: PulledValue]]] = [:]
        var links: [String: Set<[Int64]>] = [:]
    }

    /// Reads every claimed row and link in one repeatable-read snapshot of PostgreSQL.
    func readCurrent(_ claim: Claim, on connection: PostgresConnection) async throws -> CurrentRows {
        var keys: [String: Set<Int64>] = [:]
        var pairs: [String: [[Int64]]] = [:]
        for change in claim.changes {
            if let other = change.other {
                pairs[change.table, default: []].append([change.pk, other])
            } else {
                keys[change.table, default: []].insert(change.pk)
            }
        }
        var current = CurrentRows()
        try await inTransaction(on: connection, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
            for table in schema.tables {
                guard let wanted = keys[table.entity] else { continue }
                let columns = table.pulledColumns
                var bindings = PostgresBindings()
                bindings.append(Array(wanted))
                let list = (["pk"] + columns.map(\.name)).map(SQL.name).joined(separator: ", ")
                let rows = try await connection.query(PostgresQuery(
                    unsafeSQL: "SELECT \(list) FROM \(SQL.name(table.entity)) WHERE pk = ANY($1::bigint[])", binds: bindings))
                var found: [Int64: [String: PulledValue]] = [:]
                for cells in rows {
                    let pk = try cells[0].decode(Int64.self)
                    var values: [String: PulledValue] = [:]
                    for (index, column) in columns.enumerated() {
                        values[column.name] = try Self.decode(cells[index + 1], column: column)
                    }
                    found[pk] = values
                }
                current.rows[table.entity] = found
            }
            for join in schema.joinTables {
                guard let asked = pairs[join.name] else { continue }
                var bindings = PostgresBindings()
                bindings.append(asked.map { $0[0] })
                bindings.append(asked.map { $0[1] })
                let rows = try await connection.query(PostgresQuery(
                    unsafeSQL: "SELECT source, target FROM \(SQL.name(join.name)) WHERE (source, target) IN "
                        + "(SELECT * FROM unnest($1::bigint[], $2::bigint[]))", binds: bindings))
                var present = Set<[Int64]>()
                for (source, target) in try rows.decode((Int64, Int64).self) { present.insert([source, target]) }
                current.links[join.name] = present
            }
        }
        return current
    }

    /// A column's value as the store holds values of its type.
    static func decode(_ cell: PostgresCell, column: ReplicationSchema.Column) throws -> PulledValue {
        if column.target != nil { return .target(try cell.decode(Int64?.self)) }
        let value: StoredValue?
        switch column.sqlType {
        case "boolean": value = try cell.decode(Bool?.self).map(StoredValue.bool)
        case "smallint", "integer", "bigint": value = try cell.decode(Int64?.self).map(StoredValue.int)
        case "double precision": value = try cell.decode(Double?.self).map(StoredValue.double)
        case "numeric": value = try cell.decode(Decimal?.self).map(StoredValue.decimal)
        case "timestamp with time zone": value = try cell.decode(Date?.self).map(StoredValue.date)
        case "uuid": value = try cell.decode(UUID?.self).map(StoredValue.uuid)
        case "bytea": value = try cell.decode(PostgresBytes?.self).map { StoredValue.binary($0.bytes) }
        default: value = try cell.decode(String?.self).map(StoredValue.string)
        }
        return .stored(value ?? .null)
    }

    /// What the store changed since the last exchange: its history after PostgreSQL's token,
    /// less this replication's own pulls.
    struct LocalChanges {
        var properties = Set<[String]>()
        var deleted = Set<ObjectID>()
        var touched = Set<ObjectID>()
        var links = Set<[String]>()
    }

    /// What the store changed after `pushed` (`local`: the conflict rule's) and after
    /// `previous` (`earlier`: the writes another writer's value may have overwritten; empty
    /// without `previous`, or when its history was purged), read through `reader` in one pass
    /// from the older token.
    func localChanges(after pushed: HistoryToken, since previous: HistoryToken?,
                      in reader: RecordReader) throws -> (local: LocalChanges, earlier: LocalChanges) {
        var local = LocalChanges(), earlier = LocalChanges()
        func scan(from start: HistoryToken, earlierToo: Bool) throws {
            try forEachHistoryTransaction(after: start, in: reader) { transaction in
                guard pullClaim(of: transaction) == nil else { return true }
                if transaction.token.value > pushed.value { add(transaction, to: &local) }
                if earlierToo, let previous, transaction.token.value > previous.value { add(transaction, to: &earlier) }
                return true
            }
        }
        guard let previous, previous.value < pushed.value else {
            try scan(from: pushed, earlierToo: previous != nil)
            return (local, earlier)
        }
        do {
            try scan(from: previous, earlierToo: true)
        } catch StrataError.historyPurged {
            // Which of the store's writes lost is not known; the rule's scan still is.
            (local, earlier) = (LocalChanges(), LocalChanges())
            try scan(from: pushed, earlierToo: false)
        }
        return (local, earlier)
    }

    /// Adds one transaction's changes to `changes`.
    private func add(_ transaction: HistoryTransaction, to changes: inout LocalChanges) {
        for change in transaction.changes {
            let key = [change.id.entity, String(change.id.primaryKey)]
            switch change.kind {
            case .insert, .update:
                changes.touched.insert(change.id)
                for name in change.values.keys where !change.derivedNames.contains(name) {
                    changes.properties.insert(key + [name])
                }
                for name in change.toOneTargets.keys { changes.properties.insert(key + [name]) }
            case .delete:
                changes.deleted.insert(change.id)
            case .link, .unlink:
                guard let relationship = change.relationship, let other = change.other,
                      let side = schema.joinBySide["\(change.id.entity).\(relationship)"] else { continue }
                let pair = side.isSource ? (change.id.primaryKey, other.primaryKey)
                    : (other.primaryKey, change.id.primaryKey)
                changes.links.insert([schema.joinTables[side.table].name, String(pair.0), String(pair.1)])
            }
        }
    }

    /// Applies the claim as one store transaction under the conflict rule (none when there is
    /// nothing to change).
    ///
    /// `insertingNew`: the dataset has several stores, so a row inserted elsewhere (another
    /// store's, or a server's, keeping its key) is inserted here under its key; with one store,
    /// only rows the keying step gave this store's keys are.
    ///
    /// `previous`: the store's token at this replicator's previous pull (its changes since then
    /// that another writer's value replaces are reported as overwritten).
    ///
    /// `refused`: rows the pull leaves out (``Refusal``): their changes are not applied, and a
    /// duplicate's loser the store holds is deleted. A commit that breaks the model throws
    /// ``RuleBroken`` naming the row, for the caller to decide about and try again.
    @discardableResult
    func apply(_ claim: Claim, current: CurrentRows, after pushed: HistoryToken, since previous: HistoryToken? = nil,
               insertingNew: Bool = false,
               refused: [ObjectID: Refusal] = [:], report: inout PullReport) throws -> AppliedConflicts {
        var found = AppliedConflicts()
        // The writer of each row's last change in the claim (nil: a server application).
        var writerOf: [ObjectID: Int64?] = [:]
        // Each row once, in the order the server first touched it: every column for an insert,
        // the changed ones for updates.
        var order: [ObjectID] = []
        var columnsByRow: [ObjectID: Set<String>] = [:]
        var keyed = Set<ObjectID>()
        // Rows the server inserted, and the columns it named in updates: a NULL it left in an
        // inserted row's column it never named means "not given".
        var inserted = Set<ObjectID>()
        // Of those, the rows a server application inserted: there a NULL means "not given" (the
        // model's default); in a row another store inserted it is the store's nil.
        var serverInserted = Set<ObjectID>()
        var named: [ObjectID: Set<String>] = [:]
        var pairs: [(join: ReplicationSchema.JoinTable, pair: [Int64])] = []
        var seenPairs = Set<[String]>()
        for change in claim.changes {
            if let join = schema.joinTableByName[change.table].map({ schema.joinTables[$0] }), let other = change.other {
                if seenPairs.insert([join.name, String(change.pk), String(other)]).inserted {
                    pairs.append((join, [change.pk, other]))
                }
                continue
            }
            guard let index = schema.tableByEntity[change.table] else { continue }
            let id = ObjectID(entity: change.table, primaryKey: UInt64(bitPattern: change.pk))
            writerOf[id] = change.origin
            if columnsByRow[id] == nil { order.append(id) }
            var columns = columnsByRow[id] ?? []
            switch change.op {
            case "insert", "keyed":
                columns.formUnion(schema.tables[index].columns.map(\.name).filter { $0 != "pk" })
                if change.op == "keyed" { keyed.insert(id) }
                inserted.insert(id)
                if change.origin == nil { serverInserted.insert(id) }
            case "update":
                columns.formUnion(change.columns ?? [])
                named[id, default: []].formUnion(change.columns ?? [])
            default:
                break
            }
            columnsByRow[id] = columns
        }
        var applied = 0
        var conflicts = 0
        var deletionsWon = 0
        var transaction: RecordTransaction?
        try beforeApplying.withLock { $0 }?()
        do {
            try store.write { tx in
                transaction = tx
                tx.author = pullAuthor(claim.id)
                // What the store changed, read inside the write that applies the pull: a commit
                // of the store's own between a scan before it and this write would be missed,
                // and the pull would write the other side's value over it — a value the push
                // then leaves out (the claim wrote that column), so the store alone would keep
                // it (found by `strata-harness converge`, decision 111).
                // With them, its changes since its previous pull (pushed or not): those another
                // writer's value replaces now lost.
                let (local, earlier) = try localChanges(after: pushed, since: previous, in: tx)
                var toOnes: [(ObjectID, String, Int64?)] = []
                var deletes: [ObjectID] = []
                // A duplicate that lost to a row with a smaller key goes, wherever it came from.
                for (id, refusal) in refused.sorted(by: { ($0.key.entity, $0.key.primaryKey) < ($1.key.entity, $1.key.primaryKey) })
                    where refusal.deletesHeldRow {
                    if try tx.values(of: id) != nil { deletes.append(id) }
                }
                for id in order {
                    if refused[id] != nil { continue }
                    let columns = columnsByRow[id] ?? []
                    let held = try tx.values(of: id)
                    guard let values = current.rows[id.entity]?[Int64(bitPattern: id.primaryKey)] else {
                        // Deleted in PostgreSQL: the deletion wins, whatever the store changed.
                        if held != nil {
                            if local.touched.contains(id) { deletionsWon += 1 }
                            deletes.append(id)
                        }
                        continue
                    }
                    if held == nil {
                        // Deleted in the store: that deletion wins. A row neither side has any
                        // more (or never had) stays out.
                        if local.deleted.contains(id) { deletionsWon += 1; continue }
                        guard keyed.contains(id) || (insertingNew && inserted.contains(id)) else { continue }
                    }
                    var attributes: [String: StoredValue] = [:]
                    for column in columns.sorted() {
                        guard let value = values[column] else { continue }
                        if let held, local.properties.contains([id.entity, String(id.primaryKey), column]) {
                            conflicts += 1
                            // Attributes are reported with both values (a to-one only counted).
                            if case .stored(let other) = value, let mine = held[column], mine != other {
                                var conflict = ReplicationConflict(row: id, property: column, storeValue: mine,
                                                                   otherValue: other, otherWriter: nil, outcome: .keptStoreValue)
                                if let resolve = resolveConflict, let chosen = resolve(conflict), chosen != mine {
                                    conflict.outcome = .resolved(chosen)
                                    found.resolutions.append((id, column, chosen))
                                }
                                found.conflicts.append((conflict, writerOf[id] ?? nil))
                            }
                            continue
                        }
                        switch value {
                        case .stored(let stored):
                            // A column a server application left NULL in a row it inserted takes the
                            // model's default (a required one without default is refused), or
                            // keeps the store's value when the insert is applied again (a
                            // claim released after the store applied it).
                            if stored == .null && serverInserted.contains(id) && named[id]?.contains(column) != true { continue }
                            if held?[column] != stored {
                                attributes[column] = stored
                                if let mine = held?[column], earlier.properties.contains([id.entity, String(id.primaryKey), column]) {
                                    found.conflicts.append((ReplicationConflict(row: id, property: column, storeValue: mine,
                                                                                otherValue: stored, otherWriter: nil,
                                                                                outcome: .overwritten), writerOf[id] ?? nil))
                                }
                            }
                        case .target(let target):
                            toOnes.append((id, column, target))
                        }
                    }
                    do {
                        if held == nil {
                            try tx.insert(id.entity, primaryKey: id.primaryKey, attributes)
                            applied += 1
                        } else if !attributes.isEmpty {
                            try tx.update(id, attributes)
                            applied += 1
                        }
                    } catch {
                        throw ReplicationError.pullRejected(entity: id.entity, primaryKey: Int64(bitPattern: id.primaryKey),
                                                            reason: "\(error)")
                    }
                }
                for (id, relationship, target) in toOnes {
                    guard let entity = store.model.entities.first(where: { $0.name == id.entity }),
                          let description = entity.relationships.first(where: { $0.name == relationship }) else { continue }
                    let targetID = target.map { ObjectID(entity: description.target, primaryKey: UInt64(bitPattern: $0)) }
                    // A target the store deleted: its deletion won, and the store's own rules
                    // already decided what points at it.
                    if let targetID, try tx.values(of: targetID) == nil { continue }
                    guard try tx.target(of: relationship, of: id) != targetID else { continue }
                    do {
                        try tx.set(relationship, of: id, to: targetID)
                        applied += 1
                    } catch {
                        throw ReplicationError.pullRejected(entity: id.entity, primaryKey: Int64(bitPattern: id.primaryKey),
                                                            reason: "\(error)")
                    }
                }
                for (join, pair) in pairs {
                    if local.links.contains([join.name, String(pair[0]), String(pair[1])]) {
                        conflicts += 1
                        continue
                    }
                    let source = ObjectID(entity: join.entity, primaryKey: UInt64(bitPattern: pair[0]))
                    let target = ObjectID(entity: join.target, primaryKey: UInt64(bitPattern: pair[1]))
                    guard try tx.values(of: source) != nil, try tx.values(of: target) != nil else { continue }
                    let linked = current.links[join.name]?.contains(pair) ?? false
                    let member = try tx.members(of: join.relationship, of: source).contains(target)
                    do {
                        if linked && !member {
                            try tx.add(target, to: join.relationship, of: source)
                            applied += 1
                        } else if !linked && member {
                            try tx.remove(target, from: join.relationship, of: source)
                            applied += 1
                        }
                    } catch {
                        throw ReplicationError.pullRejected(entity: join.entity, primaryKey: pair[0], reason: "\(error)")
                    }
                }
                for id in deletes where try tx.values(of: id) != nil {
                    do {
                        try tx.delete(id)
                        applied += 1
                    } catch {
                        throw ReplicationError.pullRejected(entity: id.entity, primaryKey: Int64(bitPattern: id.primaryKey),
                                                            reason: "\(error)")
                    }
                }
            }
        } catch let error as StrataError {
            // The commit's own checks (validation, uniqueness) name the entity; the transaction
            // names the row.
            if let rule = transaction?.brokenRule { throw RuleBroken(rule: rule, error: error) }
            switch error {
            case .validation(let entity, _, _), .conflict(let entity, _, _), .invalidObject(let entity, _, _, _):
                throw ReplicationError.pullRejected(entity: entity, primaryKey: nil, reason: "\(error)")
            default:
                throw error
            }
        }
        report.rowsApplied += applied
        report.conflicts += conflicts
        report.deletionsWon += deletionsWon
        return found
    }

    /// The conflicts a pull's apply found (each with its other writer's store number, nil for a
    /// server application), and the resolver's values to commit after it.
    struct AppliedConflicts {
        var conflicts: [(ReplicationConflict, Int64?)] = []
        var resolutions: [(ObjectID, String, StoredValue)] = []
    }

    /// The store's derived values of `ids`, as updates (nil ones included: they clear the
    /// server's value).
    func derivedValues(of ids: [ObjectID]) throws -> [HistoryChange] {
        try store.read { reader in
            try ids.compactMap { id in
                guard let index = schema.tableByEntity[id.entity], let values = try reader.values(of: id) else { return nil }
                var derived: [String: StoredValue] = [:]
                for column in schema.tables[index].columns where column.isDerived {
                    derived[column.name] = values[column.name] ?? .null
                }
                return HistoryChange(kind: .update, id: id, values: derived, derivedNames: Set(derived.keys))
            }
        }
    }
}
