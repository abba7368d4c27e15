/// memcmp order over byte strings: the only key order Strata has. The comparison itself reads
/// the keys through pointers, in `KeyCompare+Unsafe.swift`.
@inline(__always)
func compareKeys(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
    guard let leftStart = left.baseAddress else { return right.isEmpty ? 0 : -1 }
    guard let rightStart = right.baseAddress else { return 1 }
    return compareKeys(leftStart, left.count, rightStart, right.count)
}

/// ``compareKeys(_:_:)`` of two arrays (the check, tests).
func compareBytes(_ left: [UInt8], _ right: [UInt8]) -> Int {
    left.withUnsafeBytes { leftBytes in right.withUnsafeBytes { rightBytes in compareKeys(leftBytes, rightBytes) } }
}
