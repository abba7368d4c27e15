import Foundation
import StrataStorage

extension RecordTransaction {
    /// Settles the transaction before the storage commit: delete rules and derived attributes
    /// (what changed since the last settle), then `deny` rules, uniqueness constraints,
    /// validation, primary-key counters.
    func prepareCommit() throws {
        try checkOpen()
        try settle()
        try checkDenials()
        try checkUniqueness()
        try validate()
        try flushRows()
        try flushWords()
        if !nextPrimaryKeys.isEmpty {
            let meta = try tx.treeCreatingIfMissing(RecordTrees.meta)
            for (entityIndex, next) in nextPrimaryKeys {
                try meta.put(RecordTrees.nextKey(model.entities[entityIndex]), KeyEncoding.primaryKey(next))
            }
        }
        if recordsHistory { try recordHistory() }
    }

    /// Appends this transaction's changes to the persistent history when the store records it
    /// (read from the file at each commit, so every writer of the store, in any process, agrees).
    func recordHistory() throws {
        guard let meta = try tx.tree(RecordTrees.meta), try meta.contains(RecordTrees.historyOnKey) else { return }
        let changes = self.changes()
        committedChanges = changes
        guard let entry = HistoryCodec.encode(changes, model: model, date: Date(), author: author) else { return }
        let token = try HistoryState.nextToken(meta)
        try tx.treeCreatingIfMissing(RecordTrees.history).put(KeyEncoding.primaryKey(token), entry)
        try meta.put(RecordTrees.historyNextKey, KeyEncoding.primaryKey(token + 1))
    }

    /// Cascades and nullifies, transitively, for the deletes since the last settle; records
    /// what a `deny` rule would block, for ``checkDenials()`` at commit, so a relationship
    /// whose objects are all deleted in the same transaction does not block.
    func applyDeleteRules() throws {
        while settledDeletes < pendingDeletes.count {
            let key = pendingDeletes[settledDeletes]
            settledDeletes += 1
            let entity = model.entities[key.entity]
            let original = original(key) ?? nil
            for rel in entity.relationships {
                var reached: [RowKey] = []
                if let field = rel.field {
                    if case .int(let targetKey)? = original?[field] {
                        reached = [RowKey(entity: rel.targetIndex, pk: UInt64(bitPattern: targetKey))]
                    }
                } else {
                    reached = try memberKeys(rel, of: key).map { RowKey(entity: rel.targetIndex, pk: $0) }
                }
                if reached.isEmpty { continue }
                // Objects deleted in this transaction too are neither cascaded to nor denied,
                // but their links to the deleted object must still go.
                let alive = try reached.filter { try row($0) != nil }
                switch rel.deleteRule {
                case .cascade:
                    for target in alive where try row(target) != nil { try delete(objectID(target)) }
                case .deny:
                    if !alive.isEmpty { denials.append((key, rel, alive)) }
                case .nullify:
                    break
                }
                // The other side forgets the deleted object (whatever the rule): unlink the
                // many-to-many, or clear the to-one of the objects that survive.
                if rel.isManyToMany {
                    for target in reached { try link(rel, key, target, add: false) }
                } else if rel.isToMany, let field = rel.inverseField {
                    for target in alive {
                        guard var row = try row(target) else { continue }
                        row[field] = .null
                        try write(target, row, explicit: true)
                    }
                }
            }
        }
    }

    /// The `deny` rules met while settling: a relationship that still reaches live objects
    /// blocks the commit.
    func checkDenials() throws {
        for (key, rel, reached) in denials {
            let alive = try reached.filter { try row($0) != nil }
            if !alive.isEmpty {
                let entity = model.entities[key.entity]
                let objects = "\(alive.count) \(rel.target) object\(alive.count == 1 ? "" : "s")"
                brokenRule = BrokenRule(row: objectID(key), rule: .deny, holder: objectID(alive[0]))
                throw StrataError.conflict(entity: entity.name, properties: [rel.name],
                                           reason: "cannot delete \(objectID(key)): '\(rel.name)' still reaches "
                                               + "\(objects) and its delete rule is deny")
            }
        }
    }

    /// Moves every changed row's uniqueness entries from its old values to its new ones, all
    /// removals first so that two objects may swap values in one transaction.
    func checkUniqueness() throws {
        let changed = model.entities.filter { !$0.uniqueFields.isEmpty }.flatMap { writtenKeys[$0.index] }
        if changed.isEmpty { return }
        for key in changed {
            let entity = model.entities[key.entity]
            guard let old = rowStates[key]?.original else { continue }
            for (i, fields) in entity.uniqueFields.enumerated() {
                let tree = try tx.treeCreatingIfMissing(RecordTrees.unique(entity, i))
                let entryKey = try uniqueKey(fields.map { old[$0] }, entity, i)
                if let entryKey, let owner = try tree.get(entryKey),
                   try RecordTrees.storedPrimaryKey(owner, tree: RecordTrees.unique(entity, i)) == key.pk {
                    _ = try tree.delete(entryKey)
                }
            }
        }
        for key in changed {
            let entity = model.entities[key.entity]
            guard let new = rowStates[key]?.current else { continue }
            for (i, fields) in entity.uniqueFields.enumerated() {
                let tree = try tx.treeCreatingIfMissing(RecordTrees.unique(entity, i))
                guard let entryKey = try uniqueKey(fields.map { new[$0] }, entity, i) else { continue }
                let owner = try tree.get(entryKey).map {
                    try RecordTrees.storedPrimaryKey($0, tree: RecordTrees.unique(entity, i))
                }
                if let owner, owner != key.pk {
                    brokenRule = BrokenRule(row: objectID(key), rule: .unique(i),
                                            holder: ObjectID(entity: entity.name, primaryKey: owner))
                    throw StrataError.conflict(entity: entity.name, properties: entity.uniquenessConstraints[i],
                                               reason: "\(objectID(key)) has the same values as "
                                                   + "\(entity.name)/\(owner)")
                }
                try tree.put(entryKey, KeyEncoding.primaryKey(key.pk))
            }
        }
    }

    /// The uniqueness key of some values; nil when one is nil (SQL semantics: nils never clash).
    func uniqueKey(_ values: [StoredValue], _ entity: EntityDescription, _ i: Int) throws -> [UInt8]? {
        guard let (key, whole) = RecordTrees.uniqueKey(values) else { return nil }
        guard whole else {
            throw StrataError.validation(entity: entity.name,
                                         property: entity.uniquenessConstraints[i].joined(separator: ","),
                                         reason: "a value in a uniqueness constraint is longer than "
                                             + "\(KeyEncoding.maxValueBytes) bytes")
        }
        return key
    }

    /// Required values, integer ranges and validation rules: every field of the rows a caller
    /// inserted or changed, and the changed fields of rows only derivation changed (their
    /// other fields are as the last commit validated them).
    func validate() throws {
        for keys in writtenKeys {
            for key in keys {
                guard let state = rowStates[key], let row = state.current else { continue }
                let entity = model.entities[key.entity]
                let unchanged = state.explicit ? nil : state.original
                // The throws below are jumps to the catch, which names the row for the caller.
                do {
                    for check in entity.fieldChecks {
                        let i = check.field
                        if let unchanged, unchanged[i] == row[i] { continue }
                        // Read in place: only a value a rule judges is copied.
                        if case .null = row[i] {
                            if !check.isOptional {
                                throw StrataError.validation(entity: entity.name, property: entity.fields[i].name,
                                                             reason: "\(objectID(key)) needs a value")
                            }
                            continue
                        }
                        if let range = check.integerRange, case .int(let integer) = row[i], !range.contains(integer) {
                            throw StrataError.validation(entity: entity.name, property: entity.fields[i].name,
                                                         reason: "\(integer) does not fit "
                                                             + "\(entity.fields[i].type.rawValue)")
                        }
                        guard check.hasRules else { continue }
                        let value = row[i]
                        for rule in entity.fields[i].validation {
                            if let why = rule.violation(value) {
                                throw StrataError.validation(entity: entity.name, property: entity.fields[i].name,
                                                             reason: why)
                            }
                        }
                    }
                } catch {
                    brokenRule = BrokenRule(row: objectID(key), rule: .validation, holder: nil)
                    throw error
                }
            }
        }
    }

}
