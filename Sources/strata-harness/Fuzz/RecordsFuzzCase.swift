import StrataRecords
import StrataStorage
import StrataTesting

/// Record-layer fuzz cases: the seed record store (``RecordsWorkload/seedImage(seed:transactions:)``,
/// the TodoList model with every derived form, indexes, a unique constraint and a
/// many-to-many relationship) with its rows, index keys, inverse and join keys, key counters or
/// stored model text damaged, written by the storage engine (so every checksum is valid and the
/// damage reaches the record decoders) into page images, commit records or both, then opened
/// read-only without a model (simulated file system) and read-write with the TodoList model (a
/// real file through the POSIX layer), and examined by ``RecordsFuzzCheck``.
enum RecordsFuzzCase {
    static let kindNames = ["row bytes", "row key", "index key", "relationship key", "model text", "key counter",
                            "whole tree", "history", "several"]

    /// Case `index` (its kind is chosen by the caller) of `seed`: a damaged copy of `image`.
    static func make(_ image: RecordsImage, seed: UInt64, index: Int,
                     kind: Int) -> (image: RecordsImage, what: String) {
        var rng = SplitMix64(seed: mixSeed(seed, UInt64(index), 0x5245_435A))
        var damaged = image
        damaged.placement = RecordsImage.Placement(rawValue: UInt8(rng.below(3))) ?? .pages
        var what: [String] = []
        if kind == kindNames.count - 1 {
            for _ in 0..<rng.int(2...4) { what.append(forge(&damaged, kind: rng.below(kindNames.count - 1), &rng)) }
        } else {
            what.append(forge(&damaged, kind: kind, &rng))
        }
        return (damaged, what.joined(separator: "; ") + " (\(damaged.placement))")
    }

    /// Trees whose name starts with one of `prefixes` (indices into `image.trees`).
    static func trees(_ image: RecordsImage, _ prefixes: [String]) -> [Int] {
        image.trees.indices.filter { index in
            prefixes.contains { image.trees[index].name.hasPrefix($0) } && !image.trees[index].entries.isEmpty
        }
    }

    static let extremes: [UInt64] = [0, 1, 0x7F, 0x80, 0xFFFF, 0xFFFF_FFFF, 1 << 40, (1 << 63) - 1, 1 << 63, UInt64.max]

    /// Damages one thing of the given kind; returns what.
    static func forge(_ image: inout RecordsImage, kind: Int, _ rng: inout SplitMix64) -> String {
        func pick<T>(_ choices: [T]) -> T { choices[rng.below(choices.count)] }
        switch kind {
        case 0:
            guard let treeIndex = trees(image, ["rows:"]).randomElement(using: &rng) else { return "no rows" }
            let entryIndex = rng.below(image.trees[treeIndex].entries.count)
            var row = image.trees[treeIndex].entries[entryIndex].value
            let name = "\(image.trees[treeIndex].name) row \(entryIndex)"
            let what: String
            switch rng.below(8) {
            case 0:
                for _ in 0..<rng.int(1...3) where !row.isEmpty { row[rng.below(row.count)] ^= 1 << UInt8(rng.below(8)) }
                what = "bits flipped"
            case 1:
                let at = rng.below(max(1, row.count))
                let value = pick([0x00, 0xFF, 0x80, 0x7F] as [UInt8])
                if at < row.count { row[at] = value }
                what = "byte \(at) = \(value)"
            case 2:
                let length = rng.below(row.count + 1)
                row.removeSubrange(length...)
                what = "cut to \(length) bytes"
            case 3:
                row += rng.bytes(rng.int(1...40))
                what = "garbage appended"
            case 4:
                // A length field: a byte L followed by L printable bytes (a string's length).
                let lengths = (1..<max(1, row.count)).filter { position in
                    let length = Int(row[position - 1])
                    return length >= 1 && position + length <= row.count
                        && row[position..<(position + length)].allSatisfy { $0 >= 0x20 }
                }
                let value = pick(extremes)
                if let position = lengths.randomElement(using: &rng) {
                    row.replaceSubrange((position - 1)..<position, with: ReferenceFormat.ByteWriter.varint(value))
                    what = "string length at \(position - 1) = \(value)"
                } else {
                    what = "no string length found"
                }
            case 5:
                // The field count after the version byte.
                let value = pick(extremes)
                if row.count >= 2 { row.replaceSubrange(1..<2, with: ReferenceFormat.ByteWriter.varint(value)) }
                what = "field count = \(value)"
            case 6:
                let value = pick([0, 2, 0xFF] as [UInt8])
                if !row.isEmpty { row[0] = value }
                what = "version = \(value)"
            default:
                let others = trees(image, ["rows:"]).filter { $0 != treeIndex }
                if let otherTree = others.randomElement(using: &rng) {
                    row = image.trees[otherTree].entries[rng.below(image.trees[otherTree].entries.count)].value
                    what = "replaced by a row of \(image.trees[otherTree].name)"
                } else {
                    row = []
                    what = "emptied"
                }
            }
            image.trees[treeIndex].entries[entryIndex].value = row
            return "\(name): \(what)"
        case 1:
            guard let treeIndex = trees(image, ["rows:"]).randomElement(using: &rng) else { return "no rows" }
            return forgeKey(&image, treeIndex, &rng, what: "primary key")
        case 2:
            guard let treeIndex = trees(image, ["index:", "unique:", "extremes:"]).randomElement(using: &rng) else {
                return "no index"
            }
            if image.trees[treeIndex].name.hasPrefix("unique:"), rng.chance(0.4) {
                let entryIndex = rng.below(image.trees[treeIndex].entries.count)
                let value = pick([[], [1, 2, 3], Array(repeating: 0xFF, count: 8), Array(repeating: 0, count: 8),
                                  rng.bytes(9)] as [[UInt8]])
                image.trees[treeIndex].entries[entryIndex].value = value
                return "\(image.trees[treeIndex].name) entry \(entryIndex): primary key = \(value)"
            }
            return forgeKey(&image, treeIndex, &rng, what: "index key")
        case 3:
            guard let treeIndex = trees(image, ["inverse:", "join:"]).randomElement(using: &rng) else {
                return "no relationship tree"
            }
            return forgeKey(&image, treeIndex, &rng, what: "link")
        case 4:
            guard let treeIndex = image.trees.firstIndex(where: { $0.name == "records:meta" }),
                  let entryIndex = image.trees[treeIndex].entries.firstIndex(where: { $0.key == Array("schema".utf8) })
            else { return "no schema" }
            var lines = String(decoding: image.trees[treeIndex].entries[entryIndex].value, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let i = rng.below(lines.count)
            let what: String
            switch rng.below(9) {
            case 0: lines.remove(at: i); what = "line \(i) removed"
            case 1: lines.insert(lines[i], at: i); what = "line \(i) doubled"
            case 2:
                let j = rng.below(lines.count)
                lines.swapAt(i, j)
                what = "lines \(i) and \(j) swapped"
            case 3:
                let types = ["bool", "int16", "int32", "int64", "double", "decimal", "string", "date", "uuid", "binary",
                             "nosuchtype"]
                let words = lines[i].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                if let wordIndex = words.indices.filter({ types.contains(words[$0]) }).randomElement(using: &rng) {
                    var changed = words
                    changed[wordIndex] = pick(types)
                    lines[i] = changed.joined(separator: " ")
                    what = "line \(i): type \(words[wordIndex]) -> \(changed[wordIndex])"
                } else {
                    lines[i] += " optional"
                    what = "line \(i): optional added"
                }
            case 4:
                var bytes = Array(lines[i].utf8)
                if !bytes.isEmpty { bytes[rng.below(bytes.count)] = UInt8(truncatingIfNeeded: rng.next()) }
                lines[i] = String(decoding: bytes, as: UTF8.self)
                what = "line \(i): a byte changed"
            case 5:
                lines[i] = String(lines[i].prefix(rng.below(lines[i].count + 1)))
                what = "line \(i) cut"
            case 6:
                lines[i] = lines[i].replacing("@count", with: pick(["@sum", "@avg", "@max", "@nothing", ""]))
                    .replacing("items.", with: pick(["tags.", "list.", "nothing.", "items.items."]))
                what = "line \(i): expression changed"
            case 7:
                lines.insert(pick(["entity", "entity TodoList", "  X.y: attribute string",
                                   "  TodoList: index (nothing)", "  Item.list: to-one Nowhere",
                                   "  TodoList: unique (name, name)", "\u{0}\u{FFFF}"]), at: i)
                what = "line inserted at \(i)"
            default:
                lines = Array(lines.prefix(i))
                what = "text cut after line \(i)"
            }
            var text = Array(lines.joined(separator: "\n").utf8)
            if rng.below(20) == 0 { text = [0xFF, 0xFE] + text }
            image.trees[treeIndex].entries[entryIndex].value = text
            return "model text: \(what)"
        case 5:
            guard let treeIndex = image.trees.firstIndex(where: { $0.name == "records:meta" }) else { return "no meta" }
            if rng.chance(0.3) {
                // The store's key range (FORMAT.md §12, "Primary-key ranges"): a number past the
                // last range, a range the counters do not lie in, or bytes of another length.
                let key = Array("keyrange".utf8)
                let value: [UInt8] = rng.chance(0.3)
                    ? rng.bytes(rng.below(12))
                    : withUnsafeBytes(of: pick([0, 1, 5, (1 << 22) - 1, 1 << 22, UInt64.max]).bigEndian) { Array($0) }
                image.trees[treeIndex].entries.removeAll { $0.key == key }
                image.trees[treeIndex].entries.append(.init(key: key, value: value))
                return "records:meta keyrange = \(value)"
            }
            let counters = image.trees[treeIndex].entries.indices.filter {
                image.trees[treeIndex].entries[$0].key.starts(with: Array("next:".utf8))
            }
            guard let entryIndex = counters.randomElement(using: &rng) else { return "no key counter" }
            let value: [UInt8] = rng.chance(0.3)
                ? rng.bytes(rng.below(12)) : withUnsafeBytes(of: pick(extremes).bigEndian) { Array($0) }
            image.trees[treeIndex].entries[entryIndex].value = value
            return "\(String(decoding: image.trees[treeIndex].entries[entryIndex].key, as: UTF8.self)) = \(value)"
        case 7:
            return forgeHistory(&image, &rng)
        default:
            let treeIndex = rng.below(image.trees.count)
            let name = image.trees[treeIndex].name
            switch rng.below(3) {
            case 0:
                image.trees.remove(at: treeIndex)
                return "tree \(name) removed"
            case 1:
                let target = pick(["rows:Nobody", "index:Item:nothing", "rows:TodoList", "inverse:Item:list",
                                   "join:Tag:lists", name + "x"])
                image.trees[treeIndex].name = target
                return "tree \(name) renamed \(target)"
            default:
                image.trees[treeIndex].entries = image.trees[treeIndex].entries.shuffled(using: &rng)
                    .prefix(image.trees[treeIndex].entries.count / 2).map { $0 }
                return "tree \(name): half its entries removed"
            }
        }
    }

    /// Damages the key of one entry of tree `treeIndex` (or the entry itself).
    /// Damages the persistent history (FORMAT.md §12, "History"): an entry's bytes, an entry
    /// lost or moved, or the meta keys that say how far it runs.
    static func forgeHistory(_ image: inout RecordsImage, _ rng: inout SplitMix64) -> String {
        func pick<T>(_ choices: [T]) -> T { choices[rng.below(choices.count)] }
        let meta = image.trees.firstIndex { $0.name == "records:meta" }
        if let meta, rng.chance(0.3) {
            let key = pick(["history", "history:next", "history:purged"])
            let value: [UInt8] = rng.chance(0.3)
                ? rng.bytes(rng.below(12)) : withUnsafeBytes(of: pick(extremes).bigEndian) { Array($0) }
            image.trees[meta].entries.removeAll { $0.key == Array(key.utf8) }
            if !rng.chance(0.2) { image.trees[meta].entries.append(.init(key: Array(key.utf8), value: value)) }
            return "records:meta \(key) = \(value)"
        }
        guard let treeIndex = trees(image, ["records:history"]).first else { return "no history" }
        let entryIndex = rng.below(image.trees[treeIndex].entries.count)
        var entry = image.trees[treeIndex].entries[entryIndex]
        let what: String
        switch rng.below(5) {
        case 0:
            for _ in 0..<rng.int(1...4) where !entry.value.isEmpty {
                entry.value[rng.below(entry.value.count)] ^= 1 << UInt8(rng.below(8))
            }
            what = "bits flipped"
        case 1:
            entry.value = Array(entry.value.prefix(rng.below(entry.value.count + 1)))
            what = "cut to \(entry.value.count) bytes"
        case 2:
            let at = rng.below(max(1, entry.value.count))
            let value = pick([0x00, 0xFF, 0x80, 0x7F, 0x09] as [UInt8])
            if at < entry.value.count { entry.value[at] = value }
            what = "byte \(at) = \(value)"
        case 3:
            image.trees[treeIndex].entries.remove(at: entryIndex)
            return "records:history entry \(entryIndex) removed"
        default:
            entry.key = rng.chance(0.5) ? rng.bytes(rng.below(12))
                : withUnsafeBytes(of: pick(extremes).bigEndian) { Array($0) }
            what = "key = \(entry.key)"
        }
        image.trees[treeIndex].entries[entryIndex] = entry
        return "records:history entry \(entryIndex): \(what)"
    }

    static func forgeKey(_ image: inout RecordsImage, _ treeIndex: Int, _ rng: inout SplitMix64,
                         what kind: String) -> String {
        let entries = image.trees[treeIndex].entries
        let entryIndex = rng.below(entries.count)
        var key = entries[entryIndex].key
        let name = "\(image.trees[treeIndex].name) entry \(entryIndex)"
        switch rng.below(8) {
        case 0:
            let length = rng.int(1...min(7, max(1, key.count)))
            key = Array(key.prefix(length))
            image.trees[treeIndex].entries[entryIndex].key = key
            return "\(name): \(kind) cut to \(length) bytes (shorter than a primary key)"
        case 1:
            let length = rng.below(max(1, key.count))
            key = Array(key.prefix(max(1, length)))
            image.trees[treeIndex].entries[entryIndex].key = key
            return "\(name): \(kind) cut to \(key.count) bytes"
        case 2:
            for _ in 0..<rng.int(1...3) { key[rng.below(key.count)] ^= 1 << UInt8(rng.below(8)) }
            image.trees[treeIndex].entries[entryIndex].key = key
            return "\(name): bits flipped in the \(kind)"
        case 3:
            // The trailing primary key replaced: a row that does not exist, or an extreme.
            let pk = [0, UInt64.max, 1 << 63, 999_999][rng.below(4)]
            if key.count >= 8 {
                key.replaceSubrange((key.count - 8)..., with: withUnsafeBytes(of: pk.bigEndian) { Array($0) })
            }
            image.trees[treeIndex].entries[entryIndex].key = key
            return "\(name): trailing primary key = \(pk)"
        case 4:
            image.trees[treeIndex].entries.remove(at: entryIndex)
            return "\(name) removed"
        case 5:
            // Another entry's key, so two entries become one (the second value wins).
            let other = entries[rng.below(entries.count)].key
            image.trees[treeIndex].entries[entryIndex].key = other
            return "\(name): \(kind) duplicates another"
        case 6:
            image.trees[treeIndex].entries.append(RecordsImage.Entry(key: rng.bytes(rng.int(1...24)),
                                                                     value: rng.bytes(rng.below(16))))
            return "\(image.trees[treeIndex].name): a random entry added"
        default:
            key += rng.bytes(rng.int(1...9))
            image.trees[treeIndex].entries[entryIndex].key = key
            return "\(name): \(kind) lengthened"
        }
    }

    /// The opens of a record case: read-only without a model on the simulated file system (it
    /// must write nothing), read-write with the TodoList model as a real file through POSIX.
    /// (The damage lies in tree contents, which both layers deliver alike; storage cases open
    /// both ways on both layers.)
    static func examineAll(_ bytes: [UInt8], posixDirectory: String, model: Model) -> [(String, RecordsFuzzOutcome)] {
        var out: [(String, RecordsFuzzOutcome)] = []
        for (layer, readOnly) in [(FuzzLayer.simulated, true), (.posix(directory: posixDirectory), false)] {
            let label = (readOnly ? "read-only " : "read-write ") + layer.description
            do {
                let (fs, path, simulated) = try layer.place(bytes, name: "records.strata")
                var options = RecordsImage.options(fs)
                options.readOnly = readOnly
                let before = simulated?.mutationCount ?? 0
                var outcome = RecordsFuzzCheck.examine(path: path, options: options, model: readOnly ? nil : model)
                if readOnly, let simulated, simulated.mutationCount != before, !outcome.isFailure {
                    outcome = .inconsistent("the read-only open wrote to the file system")
                }
                out.append((label, outcome))
            } catch {
                out.append((label, .otherError("placing the case: \(error)")))
            }
        }
        return out
    }

    /// The line a worker prints for a record case: `I` (read, clean), `C` (read, checkRecords()
    /// found problems), `E kind: …` (a typed error) or `W …` (wrong data or an untyped error).
    static func judge(_ outcomes: [(String, RecordsFuzzOutcome)]) -> String {
        let wrong = outcomes.filter { $0.1.isFailure }.map { "\($0.0): \($0.1)" }
        if !wrong.isEmpty { return "W " + wrong.joined(separator: " | ") }
        for (_, outcome) in outcomes {
            if case .typed(let error) = outcome { return "E \(errorKind(error)): \(error)" }
        }
        let flagged = outcomes.contains {
            if case .read(_, let problems) = $0.1 { return !problems.isEmpty } else { return false }
        }
        return flagged ? "C" : "I"
    }

    static func errorKind(_ error: StrataError) -> String {
        switch error {
        case .corrupt: return "corrupt"
        case .notAStrataFile: return "notAStrataFile"
        case .unsupportedFormatVersion: return "unsupportedFormatVersion"
        case .ioFailure: return "ioFailure"
        case .invalidArgument: return "invalidArgument"
        case .invalidModel: return "invalidModel"
        case .modelMismatch: return "modelMismatch"
        case .validation: return "validation"
        case .conflict: return "conflict"
        case .objectNotFound: return "objectNotFound"
        case .invalidFetch: return "invalidFetch"
        default: return "other"
        }
    }
}
