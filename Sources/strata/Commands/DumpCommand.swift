import ArgumentParser
import StrataStorage

/// `strata dump FILE [--tree NAME | --entity NAME] [--limit N] [--prefix HEX]`: prints a tree's entries as
/// `key<TAB>value` lines (bbolt's `keys`/`get` in one), or lists the trees. Keys and values are
/// printable ASCII with `\xNN` for every other byte, so binary data cannot break the lines.
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print a tree's entries (or, without --tree, list the trees).",
        discussion: """
            Opens the store read-only (no lock). Each line is KEY<TAB>VALUE; bytes outside \
            printable ASCII, and backslash, are written as \\xNN. Without --tree, prints \
            NAME<TAB>ENTRIES for each tree.
            """)

    @Argument(help: "The store file.")
    var file: String

    @Option(help: "The tree to print.")
    var tree: String?

    @Option(help: "Print the rows of this entity as JSON lines (stores with a record model).")
    var entity: String?

    @Option(help: "Print at most this many entries.")
    var limit: Int?

    @Option(help: "Print only keys starting with these bytes, in hex (e.g. 7573 for \"us\").")
    var prefix: String?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
        if let prefix, parseHex(prefix) == nil {
            throw ValidationError("--prefix must be an even number of hex digits, e.g. 7573")
        }
        if tree == nil && entity == nil && (limit != nil || prefix != nil) {
            throw ValidationError("--limit and --prefix need --tree")
        }
        if entity != nil && (tree != nil || prefix != nil) {
            throw ValidationError("--entity cannot be combined with --tree or --prefix")
        }
    }

    func run() throws {
        let store = try openStore(file, readOnly: true)
        defer { try? store.close() }
        if let entity {
            guard let records = try RecordsReport.open(store) else { throw ToolError("\(file) holds no record model") }
            try RecordsReport.dumpRows(records, entity: entity, limit: limit)
            return
        }
        try store.read { snapshot in
            let out = OutputBuffer()
            defer { out.flush() }
            guard let name = tree else {
                for name in try snapshot.treeNames {
                    let count = try snapshot.tree(name)?.count ?? 0
                    out.write("\(escapeBytes(name.utf8))\t\(count)\n")
                }
                return
            }
            guard let openTree = try snapshot.tree(name) else { throw StrataError.treeNotFound(name) }
            let keyPrefix = prefix.flatMap(parseHex) ?? []
            let cursor = openTree.makeCursor()
            var remaining = limit ?? Int.max
            var ok = keyPrefix.isEmpty ? try cursor.first() : try cursor.seek(keyPrefix)
            while ok && remaining > 0 {
                let key = cursor.key
                if !keyPrefix.isEmpty
                    && !(key.count >= keyPrefix.count && key.prefix(keyPrefix.count).elementsEqual(keyPrefix)) {
                    break  // Keys are sorted: the first one without the prefix ends the range.
                }
                // copyValue reports an unreadable overflow value; `value` would print it empty.
                let value = cursor.isOverflow ? escapeBytes(try cursor.copyValue()) : escapeBytes(cursor.value)
                out.write(escapeBytes(key) + "\t" + value + "\n")
                remaining -= 1
                ok = try cursor.next()
            }
        }
    }
}

/// `"0aff"` → `[0x0a, 0xff]`; `nil` for an odd length, a non-hex digit or an empty string.
func parseHex(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
    func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var i = 0
    while i < digits.count {
        guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
        out.append(high << 4 | low)
        i += 2
    }
    return out
}

/// Buffered stdout for commands that print many lines (`dump`): one `print` per 64 KiB
/// instead of one per line.
final class OutputBuffer {
    private var buffer = ""

    func write(_ text: String) {
        buffer += text
        if buffer.utf8.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        print(buffer, terminator: "")
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
