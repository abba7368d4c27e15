import Foundation
import StrataStorage

/// The checker's view of the trees beside the rows: their names, the meta tree and key
/// counters, and every entry tree (indexes, uniqueness, inverses, joins, extremes) against the
/// entries the rows call for.
extension RecordCheck {
    // MARK: Tree names and the meta tree

    /// The names of the trees the model's record layer may hold.
    var expectedTreeNames: Set<String> {
        var names: Set<String> = [RecordTrees.meta, RecordTrees.history]
        for entity in model.entities {
            names.insert(RecordTrees.rows(entity))
            for i in entity.indexFields.indices { names.insert(RecordTrees.index(entity, i)) }
            for i in entity.fullTextFields.indices { names.insert(RecordTrees.words(entity, i)) }
            for i in entity.uniqueFields.indices { names.insert(RecordTrees.unique(entity, i)) }
            for (field, _) in entity.toOneFields { names.insert(RecordTrees.inverse(entity, field)) }
            for rel in entity.relationships where rel.isManyToMany { names.insert(RecordTrees.join(entity, rel.name)) }
            for derived in entity.derivedAttributes {
                if case .aggregate(let function, _, _) = derived.parsed, function == .min || function == .max {
                    names.insert(RecordTrees.extremes(entity, derived.name))
                }
            }
        }
        return names
    }

    /// Record-looking trees that belong to nothing in the model (a renamed or stray tree).
    func checkTreeNames() throws {
        let all: [String]
        switch source {
        case .read(let tx): all = try tx.treeNames
        case .write(let tx): all = try tx.treeNames
        }
        let expected = expectedTreeNames
        for name in all
            where (RecordTrees.isRecordTreeName(name) || name.hasPrefix("records:")) && !expected.contains(name) {
            report("tree \(name) looks like a record tree but belongs to nothing in the model")
        }
    }

    /// The stored model text, the key counters, the key format version, and nothing else in
    /// `records:meta`.
    func checkMeta() throws {
        var counters: [String: [UInt8]] = [:]
        var keyRange = PrimaryKeyRange.initial
        var schema: [UInt8]?
        try source.scan(RecordTrees.meta, prefix: []) { key, cursor in
            let keyBytes = [UInt8](key)
            if keyBytes == RecordTrees.schemaKey {
                schema = try cursor.copyValue()
            } else if keyBytes == KeyFormat.metaKey {
                // Opening upgrades older keys and refuses newer ones, so a checked store holds
                // the current version, or one a read-only open reads as it (``KeyFormat``).
                let version = try cursor.copyValue()
                if version.count != 1 || !KeyFormat.readable.contains(version[0]) {
                    report("\(RecordTrees.meta): the key format entry is \(version), expected [\(KeyFormat.current)]")
                }
            } else if keyBytes == RecordTrees.modelVersionKey {
                do {
                    let version = try RecordTrees.storedModelVersion(try cursor.copyValue())
                    if version != model.version {
                        report("\(RecordTrees.meta): the model version entry is \(version ?? 1), "
                               + "the model's is \(model.version)")
                    }
                } catch StrataError.corrupt(let what, _) {
                    report(what)
                }
            } else if [RecordTrees.historyOnKey, RecordTrees.historyNextKey, RecordTrees.historyPurgedKey]
                        .contains(keyBytes) {
                // Checked with the history (RecordCheck+History).
            } else if keyBytes == RecordTrees.keyRangeKey {
                do {
                    keyRange = try RecordTrees.storedKeyRange(try cursor.copyValue())
                } catch StrataError.corrupt(let what, _) {
                    report(what)
                }
            } else if keyBytes.starts(with: Array("next:".utf8)) {
                counters[String(decoding: keyBytes.dropFirst(5), as: UTF8.self)] = try cursor.copyValue()
            } else {
                report("\(RecordTrees.meta) holds an unknown key \(Self.printable(keyBytes))")
            }
            return true
        }
        if let schema {
            // A model rebuilt from the stored text (the tool's) is compared with the text it was
            // read from: whether it prints that text back is a property of the reader, not of
            // the store (Model.schemaLinesReadDifferently). A change of text since the open (a
            // migration beside the check) is still a difference.
            let expected = model.storedSchemaLines ?? model.schemaLines
            let storedLines = String(decoding: schema, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false)
            if storedLines.map(String.init) != expected {
                report("\(RecordTrees.meta): the stored schema is not the model's")
            }
        } else {
            report("\(RecordTrees.meta) holds no schema")
        }
        for name in counters.keys.sorted() where model.entity(name) == nil {
            report("\(RecordTrees.meta) holds a key counter next:\(name) for an entity the model does not have")
        }
        if let counted = transaction?.primaryKeyRange { keyRange = counted }
        for entity in model.entities { checkCounter(entity, stored: counters[entity.name], range: keyRange) }
    }

    /// The next primary key of `entity`: inside the store's key range, above every key of the
    /// range in use, and not the range's last (an insert could not allocate it). A
    /// transaction's counter moves in memory until its commit.
    func checkCounter(_ entity: EntityDescription, stored: [UInt8]?, range: PrimaryKeyRange) {
        let largest = entities[entity.index].keys.last { range.contains($0) }
        var next: UInt64
        if let counted = transaction?.nextPrimaryKeys[entity.index] {
            next = counted
        } else if let stored {
            guard stored.count == 8 else {
                report("\(RecordTrees.meta): the key counter next:\(entity.name) is \(stored.count) bytes, not 8")
                return
            }
            next = KeyEncoding.decodePrimaryKey(stored)
        } else {
            if let largest {
                report("\(RecordTrees.meta) has no key counter next:\(entity.name), "
                       + "but \(entity.name)/\(largest) exists")
            }
            return
        }
        if let largest, next <= largest {
            report("\(RecordTrees.meta): the key counter next:\(entity.name) (\(next)) is not above the largest key "
                   + "in use (\(largest))")
        } else if !range.contains(next) {
            report("\(RecordTrees.meta): the key counter next:\(entity.name) (\(next)) lies outside the store's "
                   + "\(range)")
        } else if next == range.upperBound - 1 {
            report("\(RecordTrees.meta): the key counter next:\(entity.name) is exhausted (\(next), the last key of "
                   + "the store's \(range))")
        }
    }

    // MARK: Entry trees

    /// Word indexes: one posting per word of each row's indexed values, holding its count in
    /// each property, nothing else, once the index's recent changes are applied over its blocks;
    /// blocks and change entries well formed, each word's blocks in key order and disjoint.
    func checkWordIndexes(_ entity: EntityDescription) throws {
        let rows = entities[entity.index]
        for (i, fields) in entity.fullTextFields.enumerated() {
            // Each expected posting by word and key, with its counts.
            var expected: [[UInt8]: [UInt64: [UInt32]]] = [:]
            var postings = 0
            let folding = WordFolding()
            for (position, row) in rows.rows.enumerated() {
                let words = WordIndex.terms(row, fields: fields, folding: folding)
                for (word, slot) in words.slots {
                    expected[Array(word.utf8), default: [:]][rows.keys[position]] = words.counts(ofSlot: slot).map { UInt32(clamping: $0) }
                    postings += 1
                }
            }
            let tree = RecordTrees.words(entity, i)
            // The batches' changes first (their entries sort after every block), each row's
            // latest by word (an empty array: the row no longer holds the word); then the blocks,
            // compared posting by posting where no change replaces them, so only the changes are
            // held, not every posting the index has.
            var changed: [[UInt8]: [UInt64: [UInt32]]] = [:]
            var damaged = 0, overlapping = 0, damagedChanges = 0, misordered = 0
            var lastBatch: UInt64 = 0, lastChangedWord: [UInt8] = []
            var counts: [UInt32] = []
            try source.scan(tree, prefix: [WordChanges.marker]) { key, cursor in
                do {
                    guard let batch = try WordChanges.batch(of: key, tree: tree) else { return true }
                    if batch != lastBatch {
                        lastBatch = batch
                        lastChangedWord = []
                    }
                    var reader = WordChanges.Reader(cursor.value, fieldCount: fields.count, tree: tree)
                    var firstWord = true
                    while let range = try reader.nextWord() {
                        let word = Array(reader.word(range))
                        if firstWord, !word.elementsEqual(key[WordChanges.keyPrefixLength...]) { misordered += 1 }
                        if !lastChangedWord.isEmpty, !lastChangedWord.lexicographicallyPrecedes(word) { misordered += 1 }
                        firstWord = false
                        lastChangedWord = word
                        while true {
                            counts.removeAll(keepingCapacity: true)
                            guard let holds = try reader.nextChange(into: &counts) else { break }
                            changed[word, default: [:]][reader.pk] = holds ? counts : []
                        }
                    }
                } catch {
                    damagedChanges += 1
                }
                return true
            }
            var matched = 0, extra = 0, miscounted = 0
            func compare(_ word: [UInt8], _ pk: UInt64, _ counts: [UInt32]) {
                if let right = expected[word]?[pk] {
                    matched += 1
                    if counts != right { miscounted += 1 }
                } else {
                    extra += 1
                }
            }
            var lastWord: [UInt8] = [], lastKey: UInt64?
            var replaced: [UInt64: [UInt32]]?
            try source.scan(tree, prefix: []) { key, cursor in
                guard key.first != WordChanges.marker else { return false }
                guard key.count >= 10, key[key.count - 9] == 0, let first = try? WordIndex.primaryKey(key, tree: tree) else {
                    damaged += 1
                    return true
                }
                let wordBytes = Array(key[..<(key.count - 9)])
                if wordBytes != lastWord {
                    lastWord = wordBytes
                    lastKey = nil
                    replaced = changed[wordBytes]
                }
                if let lastKey, first <= lastKey { overlapping += 1 }
                var block = PostingBlockReader(cursor.value, firstKey: first)
                do {
                    counts.removeAll(keepingCapacity: true)
                    while try block.next(fieldCount: fields.count, into: &counts, tree: tree) {
                        lastKey = block.pk
                        if replaced?[block.pk] == nil { compare(wordBytes, block.pk, counts) }
                        counts.removeAll(keepingCapacity: true)
                    }
                } catch {
                    damaged += 1
                }
                return true
            }
            for (word, rows) in changed {
                for (pk, counts) in rows where !counts.isEmpty { compare(word, pk, counts) }
            }
            reportCounts(tree, missing: postings - matched, extra: extra, what: "word index")
            if miscounted > 0 {
                report("\(tree): \(miscounted) posting\(miscounted == 1 ? " counts" : "s count") its word's occurrences wrong")
            }
            if damaged > 0 {
                report("\(tree): \(damaged) entr\(damaged == 1 ? "y is" : "ies are") not a well-formed posting block")
            }
            if damagedChanges > 0 {
                report("\(tree): \(damagedChanges) change entr\(damagedChanges == 1 ? "y is" : "ies are") not well formed")
            }
            if misordered > 0 {
                report("\(tree): \(misordered) change entr\(misordered == 1 ? "y is" : "ies are") out of order (each batch's words ascending, each entry keyed by its first word)")
            }
            if overlapping > 0 {
                report("\(tree): \(overlapping) block\(overlapping == 1 ? " starts" : "s start") at or before the last key of the block before it")
            }
        }
    }

    /// Indexes: one entry per row (its values, then its key), nothing else.
    func checkIndexes(_ entity: EntityDescription) throws {
        let rows = entities[entity.index]
        for (i, fields) in entity.indexFields.enumerated() {
            var expected = Set<[UInt8]>(minimumCapacity: rows.rows.count)
            for (position, row) in rows.rows.enumerated() {
                expected.insert(KeyEncoding.indexKey(fields.map { row[$0] }, pk: rows.keys[position]))
            }
            try compare(tree: RecordTrees.index(entity, i), expected: expected,
                        what: "index (\(entity.indexes[i].joined(separator: ", ")))")
        }
    }

    /// Uniqueness: the constrained values of every row without a nil among them → its primary
    /// key, in both directions, and no two rows alike. A write transaction moves these entries
    /// at commit, so inside one they are checked against the rows as it found them.
    func checkUniqueness(_ entity: EntityDescription) throws {
        guard !entity.uniqueFields.isEmpty else { return }
        let rows = uniquenessRows(entity)
        for (i, fields) in entity.uniqueFields.enumerated() {
            let tree = RecordTrees.unique(entity, i)
            let what = "uniqueness (\(entity.uniquenessConstraints[i].joined(separator: ", ")))"
            var owners: [[UInt8]: UInt64] = [:]
            for (pk, row) in rows {
                guard let (key, whole) = RecordTrees.uniqueKey(fields.map { row[$0] }) else { continue }
                if !whole {
                    report("\(entity.name)/\(pk): a value of \(what) is longer than \(KeyEncoding.maxValueBytes) "
                           + "bytes, which a commit refuses")
                }
                if let other = owners.updateValue(pk, forKey: key) {
                    report("\(entity.name)/\(pk) and \(entity.name)/\(other) break the \(what)")
                }
            }
            var matched = 0, extra = 0
            try source.scan(tree, prefix: []) { key, cursor in
                let keyBytes = [UInt8](key)
                guard let owner = owners[keyBytes] else {
                    extra += 1
                    return true
                }
                matched += 1
                let value = try cursor.copyValue()
                if value.count != 8 {
                    report("\(tree): an entry's value is \(value.count) bytes, not the 8 of the primary key of "
                           + "\(entity.name)/\(owner), which holds those values (\(what))")
                } else if KeyEncoding.decodePrimaryKey(value) != owner {
                    report("\(tree): an entry names \(entity.name)/\(KeyEncoding.decodePrimaryKey(value)) as its "
                           + "owner, but \(entity.name)/\(owner) holds those values (\(what))")
                }
                return true
            }
            reportCounts(tree, missing: owners.count - matched, extra: extra, what: what)
        }
    }

    /// The rows a uniqueness tree reflects: the stored rows, except that inside a write
    /// transaction rows it inserted are left out and rows it changed or deleted count as the
    /// transaction found them (their entries move at commit).
    func uniquenessRows(_ entity: EntityDescription) -> [(UInt64, [StoredValue])] {
        let rows = entities[entity.index]
        guard let tx = transaction else { return Array(zip(rows.keys, rows.rows)) }
        var out: [(UInt64, [StoredValue])] = []
        for (position, pk) in rows.keys.enumerated() where tx.original(RowKey(entity: entity.index, pk: pk)) == nil {
            out.append((pk, rows.rows[position]))
        }
        // A row listed twice (a change by predicate wrote it from its bytes, then a write) counts once.
        var listed = Set<UInt64>()
        for key in tx.writtenKeys[entity.index] where !tx.writtenKeysRepeat || listed.insert(key.pk).inserted {
            if let original = tx.rowStates[key]?.original { out.append((key.pk, original)) }
        }
        return out
    }

    /// Inverses of to-one relationships: (target, row) for every row whose relationship is
    /// set, nothing else.
    func checkInverses(_ entity: EntityDescription) throws {
        let rows = entities[entity.index]
        for (field, _) in entity.toOneFields {
            var expected = Set<[UInt8]>()
            for (position, row) in rows.rows.enumerated() {
                guard case .int(let target) = row[field] else { continue }
                expected.insert(RecordTrees.pair(UInt64(bitPattern: target), rows.keys[position]))
            }
            try compare(tree: RecordTrees.inverse(entity, field), expected: expected,
                        what: "inverse of \(entity.fields[field].name)")
        }
    }

    /// Many-to-many: every link between existing rows, stored on both sides. Each join tree is
    /// read once, in key order; the two sides of a relationship are compared by a merge of one
    /// side's pairs with the other's, swapped and sorted (no lookup per link).
    func checkJoins(_ entity: EntityDescription) throws {
        for rel in entity.relationships where rel.isManyToMany {
            let targetEntity = model.entities[rel.targetIndex]
            let tree = RecordTrees.join(entity, rel.name)
            let here = entities[entity.index], there = entities[targetEntity.index]
            var pairs: [JoinPair] = []
            var nonEmpty = 0, dangling = 0
            try source.scan(tree, prefix: []) { key, cursor in
                let rowKey = try RecordTrees.primaryKey(key, at: 0, exactLength: 16, tree: tree)
                let otherKey = try RecordTrees.primaryKey(key, at: 8, exactLength: 16, tree: tree)
                if !cursor.value.isEmpty || cursor.isOverflow { nonEmpty += 1 }
                if here.row(rowKey) == nil || there.row(otherKey) == nil {
                    if dangling == 0 {
                        report("\(tree): links \(entity.name)/\(rowKey) and \(targetEntity.name)/\(otherKey), "
                               + "one of which does not exist")
                    }
                    dangling += 1
                }
                pairs.append(JoinPair(rowKey, otherKey))
                return true
            }
            if dangling > 1 { report("\(tree): \(dangling) links in all name a row that does not exist") }
            if nonEmpty > 0 {
                let entries = "entr\(nonEmpty == 1 ? "y has" : "ies have")"
                report("\(tree): \(nonEmpty) \(entries) a value; join entries are empty")
            }
            links[tree] = pairs
        }
        // The two sides of a relationship, once both are read: when the loop reaches the later
        // of the two entities (and, within one entity, from the side whose tree sorts first).
        for rel in entity.relationships where rel.isManyToMany {
            let targetEntity = model.entities[rel.targetIndex]
            let tree = RecordTrees.join(entity, rel.name), mirror = RecordTrees.join(targetEntity, rel.inverse)
            guard targetEntity.index < entity.index || (targetEntity.index == entity.index && tree <= mirror),
                  let here = links[tree], let there = links[mirror] else { continue }
            let swapped = there.map { JoinPair($0.other, $0.row) }.sorted()
            let (onlyHere, onlyThere) = JoinPair.difference(here, swapped)
            if onlyHere > 0 {
                report("\(tree): \(onlyHere) link\(onlyHere == 1 ? " has" : "s have") no entry in \(mirror)")
            }
            if onlyThere > 0 {
                report("\(mirror): \(onlyThere) link\(onlyThere == 1 ? " has" : "s have") no entry in \(tree)")
            }
        }
    }

    /// `@min`/`@max` bookkeeping: (parent, child value, child) for every member with a value.
    func checkExtremes(_ entity: EntityDescription) throws {
        for derived in entity.derivedAttributes {
            guard case .aggregate(let function, let relName, let attr?) = derived.parsed,
                  function == .min || function == .max,
                  let rel = entity.relationship(relName) else { continue }
            let childEntity = model.entities[rel.targetIndex]
            guard let source = childEntity.fieldIndex[attr] else { continue }
            var expected = Set<[UInt8]>()
            for (parent, members) in try membership(rel, of: entity) {
                for position in members {
                    let value = entities[childEntity.index].rows[position][source]
                    if value.isNull { continue }
                    let child = entities[childEntity.index].keys[position]
                    expected.insert(RecordTrees.extremesKey(parent: parent, value: value, child: child))
                }
            }
            try compare(tree: RecordTrees.extremes(entity, derived.name), expected: expected,
                        what: "@\(function == .min ? "min" : "max") bookkeeping of \(derived.name)")
        }
    }

    /// The members of every parent of `entity` through the to-many `rel`, as positions in the
    /// target's rows: from the children's to-one fields, or from `entity`'s side of the join.
    func membership(_ rel: ResolvedRelationship, of entity: EntityDescription) throws -> [UInt64: [Int]] {
        let childEntity = model.entities[rel.targetIndex]
        if let fk = rel.inverseField {
            if let known = children[childEntity.index]?[fk] { return known }
            var groups: [UInt64: [Int]] = [:]
            for (position, row) in entities[childEntity.index].rows.enumerated() {
                if case .int(let parentKey) = row[fk] {
                    groups[UInt64(bitPattern: parentKey), default: []].append(position)
                }
            }
            children[childEntity.index, default: [:]][fk] = groups
            return groups
        }
        let here = entities[entity.index], targets = entities[childEntity.index]
        var groups: [UInt64: [Int]] = [:]
        for pair in links[RecordTrees.join(entity, rel.name)] ?? [] {
            // Links to rows that do not exist are reported above; they count for nothing.
            guard here.row(pair.row) != nil, let position = targets.position[pair.other] else { continue }
            groups[pair.row, default: []].append(position)
        }
        return groups
    }

    /// Compares a tree whose values are empty with the exact set of keys it must hold.
    func compare(tree: String, expected: Set<[UInt8]>, what: String) throws {
        var matched = 0, extra = 0, nonEmpty = 0
        try source.scan(tree, prefix: []) { key, cursor in
            if expected.contains([UInt8](key)) { matched += 1 } else { extra += 1 }
            if !cursor.value.isEmpty || cursor.isOverflow { nonEmpty += 1 }
            return true
        }
        reportCounts(tree, missing: expected.count - matched, extra: extra, what: what)
        if nonEmpty > 0 {
            let entries = "entr\(nonEmpty == 1 ? "y has" : "ies have")"
            report("\(tree): \(nonEmpty) \(entries) a value; its entries are empty (\(what))")
        }
    }

    func reportCounts(_ tree: String, missing: Int, extra: Int, what: String) {
        if missing > 0 { report("\(tree): \(missing) entr\(missing == 1 ? "y" : "ies") missing (\(what))") }
        if extra > 0 { report("\(tree): \(extra) entr\(extra == 1 ? "y" : "ies") that no row accounts for (\(what))") }
    }

    static func printable(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self),
           text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) { return "'\(text)'" }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }
}
