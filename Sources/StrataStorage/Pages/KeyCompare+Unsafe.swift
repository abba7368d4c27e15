/// memcmp order over the `leftCount` bytes at `left` and the `rightCount` bytes at `right`:
/// negative, zero or positive as the left key sorts before, equal to or after the right one.
///
/// Compares eight bytes at a time as big-endian integers (two loads beat a `memcmp` call for
/// short keys; decision 5), then the tail byte by byte.
///
/// Invariants that make the reads safe: each pointer is valid for its count during the call
/// (callers lend a key they hold: a page's cell, found through a slot the page's invariant
/// keeps inside it, or a caller's buffer for the length of a search), and no byte at or past
/// `min(leftCount, rightCount)` is read: the word loop reads `[i, i + 8)` only while
/// `i + 8 ≤ common`, the byte loop `i < common`. A count of 0 reads nothing, so an empty key's
/// address may be one that is never read (``Page/keyAddress(_:)``). No alignment is assumed
/// (`loadUnaligned`).
@inline(__always)
func compareKeys(_ left: UnsafeRawPointer, _ leftCount: Int, _ right: UnsafeRawPointer, _ rightCount: Int) -> Int {
    let common = leftCount < rightCount ? leftCount : rightCount
    var i = 0
    while i &+ 8 <= common {
        let leftWord = UInt64(bigEndian: left.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let rightWord = UInt64(bigEndian: right.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        if leftWord != rightWord { return leftWord < rightWord ? -1 : 1 }
        i &+= 8
    }
    while i < common {
        let leftByte = left.load(fromByteOffset: i, as: UInt8.self)
        let rightByte = right.load(fromByteOffset: i, as: UInt8.self)
        if leftByte != rightByte { return leftByte < rightByte ? -1 : 1 }
        i &+= 1
    }
    return leftCount &- rightCount
}
