#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// memcmp order over byte strings: the only key order Strata has.
///
/// Compares eight bytes at a time as big-endian integers (two loads beat a `memcmp` call for
/// short keys, measured in the shared toolchain notes, TOOLCHAIN.md), then the tail byte by byte.
@inline(__always)
func compareKeys(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Int {
    let common = aCount < bCount ? aCount : bCount
    var i = 0
    while i &+ 8 <= common {
        let x = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let y = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        if x != y { return x < y ? -1 : 1 }
        i &+= 8
    }
    while i < common {
        let x = a.load(fromByteOffset: i, as: UInt8.self)
        let y = b.load(fromByteOffset: i, as: UInt8.self)
        if x != y { return x < y ? -1 : 1 }
        i &+= 1
    }
    return aCount &- bCount
}

@inline(__always)
func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    guard let pa = a.baseAddress else { return b.isEmpty ? 0 : -1 }
    guard let pb = b.baseAddress else { return 1 }
    return compareKeys(pa, a.count, pb, b.count)
}
