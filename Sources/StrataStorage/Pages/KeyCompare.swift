#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// memcmp order over byte strings: the only key order Strata has.
@inline(__always)
func compareKeys(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Int {
    let common = aCount < bCount ? aCount : bCount
    if common > 0 {
        let c = memcmp(a, b, common)
        if c != 0 { return Int(c) }
    }
    return aCount - bCount
}

@inline(__always)
func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    guard let pa = a.baseAddress else { return b.isEmpty ? 0 : -1 }
    guard let pb = b.baseAddress else { return 1 }
    return compareKeys(pa, a.count, pb, b.count)
}
