import StrataStorage

// The full read of one store, and the invariants it checks along the way.

/// Reads every tree both ways and looks every key up. Returns the first broken invariant.
func readEverything(_ tx: ReadTransaction) throws -> String? {
    for name in try tx.treeNames {
        guard let tree = try tx.tree(name) else { return "tree '\(name)' listed but not found" }
        let cursor = tree.makeCursor()
        var forward: [([UInt8], UInt64)] = []
        var ok = try cursor.first()
        while ok {
            let key = cursor.copyKey()
            if let last = forward.last?.0, !(last.lexicographicallyPrecedes(key)) {
                return "'\(name)': keys out of order"
            }
            forward.append((key, fingerprint(try cursor.copyValue())))
            ok = try cursor.next()
        }
        if try forward.count != tree.count { return "'\(name)': \(forward.count) entries, count \(try tree.count)" }
        var index = forward.count
        ok = try cursor.last()
        while ok {
            index -= 1
            guard index >= 0, forward[index].0 == cursor.copyKey(),
                  forward[index].1 == fingerprint(try cursor.copyValue()) else {
                return "'\(name)': backward scan differs"
            }
            ok = try cursor.previous()
        }
        if index != 0 { return "'\(name)': backward scan is shorter" }
        for (key, value) in forward {
            guard let found = try tree.get(key), fingerprint(found) == value else {
                return "'\(name)': get disagrees with the scan"
            }
        }
    }
    return nil
}

/// FNV-1a: enough to compare values without keeping them.
private func fingerprint(_ bytes: [UInt8]) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
    return hash ^ UInt64(bytes.count)
}
