import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Shared by `crash-test` and `fuzz`: content digests of a store. (Forging frames goes through
// StrataTesting's reference codec, `ReferenceFormat`.)

// MARK: Content digests

/// A 64-bit hash of a byte string (not cryptographic: it tells states apart, nothing more).
func hashBytes(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var hash: UInt64 = 0x5851_F42D_4C95_7F2D ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
    let n = bytes.count
    var i = 0
    while i + 8 <= n {
        let word = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        hash = ((hash ^ (word &* 0x87C3_7B91_1142_53D5)) << 27 | (hash ^ (word &* 0x87C3_7B91_1142_53D5)) >> 37)
            &* 0x4CF5_AD43_2745_937F &+ 0x52DC_E729
        i += 8
    }
    if i < n {
        var word: UInt64 = 0
        for j in i..<n { word = word << 8 | UInt64(bytes[j]) }
        hash = (hash ^ (word &* 0x87C3_7B91_1142_53D5)) &* 0x4CF5_AD43_2745_937F
    }
    return fmix64(hash)
}

func hashBytes(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { hashBytes($0) } }

/// The digest of one entry from its key and the hash of its value.
@inline(__always)
func entryHash(key: UnsafeRawBufferPointer, valueHash: UInt64) -> UInt64 {
    fmix64(hashBytes(key) &* 0x9E37_79B9_7F4A_7C15 ^ valueHash)
}

/// Reads every tree of a snapshot with a full forward cursor scan (checking key order and the
/// tree's count) and every value, overflow values included. With `thorough`, also a full
/// backward scan (same entries, reverse order) and point reads of a sample of keys.
func digestContent(_ tx: ReadTransaction, thorough: Bool = false) throws -> ContentDigest {
    var out = ContentDigest()
    for name in try tx.treeNames {
        guard let tree = try tx.tree(name) else { throw ToolError.wrongResult("tree '\(name)' listed but not found") }
        var treeDigest = ContentDigest.Tree()
        let cursor = tree.makeCursor()
        var ok = try cursor.first()
        var previous: [UInt8]?
        var samples: [([UInt8], UInt64)] = []
        while ok {
            let key = cursor.copyKey()
            if let previous, compareKeyBytes(previous, key) >= 0 {
                throw ToolError.wrongResult("tree '\(name)': forward scan keys out of order")
            }
            let valueHash: UInt64
            if cursor.isOverflow {
                valueHash = hashBytes(try cursor.copyValue())
            } else {
                valueHash = hashBytes(cursor.value)
            }
            if thorough && treeDigest.count % 37 == 0 { samples.append((key, valueHash)) }
            treeDigest.count += 1
            treeDigest.sum &+= key.withUnsafeBytes { entryHash(key: $0, valueHash: valueHash) }
            previous = key
            ok = try cursor.next()
        }
        if try treeDigest.count != tree.count {
            throw ToolError.wrongResult("tree '\(name)': forward scan found \(treeDigest.count) entries, "
                                 + "count says \(try tree.count)")
        }
        if thorough {
            var back = ContentDigest.Tree()
            var next: [UInt8]?
            ok = try cursor.last()
            while ok {
                let key = cursor.copyKey()
                if let next, compareKeyBytes(key, next) >= 0 {
                    throw ToolError.wrongResult("tree '\(name)': backward scan keys out of order")
                }
                let valueHash = cursor.isOverflow ? hashBytes(try cursor.copyValue()) : hashBytes(cursor.value)
                back.count += 1
                back.sum &+= key.withUnsafeBytes { entryHash(key: $0, valueHash: valueHash) }
                next = key
                ok = try cursor.previous()
            }
            if back != treeDigest {
                throw ToolError.wrongResult("tree '\(name)': backward scan (\(back.count) entries) "
                                     + "differs from forward scan (\(treeDigest.count))")
            }
            for (key, valueHash) in samples {
                guard let value = try tree.get(key) else {
                    throw ToolError.wrongResult("tree '\(name)': get misses a key the cursor found")
                }
                if hashBytes(value) != valueHash {
                    throw ToolError.wrongResult("tree '\(name)': get disagrees with the cursor")
                }
            }
        }
        out.trees[name] = treeDigest
    }
    return out
}

/// The outcome class of an error: `.corrupt` is reported as corruption; everything else
/// (I/O, refusals, harness failures) by its description.
func isCorruptError(_ error: any Error) -> Bool {
    if case StrataError.corrupt? = error as? StrataError { return true }
    return false
}
