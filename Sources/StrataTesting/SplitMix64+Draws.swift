// Draws built on SplitMix64, and seed mixing: what the seeded workloads and fuzz cases need.

extension SplitMix64 {
    /// Uniform in `0..<n` (`n > 0`).
    package mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// Uniform in `range`.
    package mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }

    /// True with probability `probability`.
    package mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// `n` random bytes, eight at a time.
    package mutating func bytes(_ n: Int) -> [UInt8] {
        if n == 0 { return [] }
        return [UInt8](unsafeUninitializedCapacity: n) { buffer, initialized in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            var i = 0
            while i < n {
                var word = next()
                let chunk = min(8, n - i)
                withUnsafeBytes(of: &word) { (base + i).copyMemory(from: $0.baseAddress!, byteCount: chunk) }
                i += chunk
            }
            initialized = n
        }
    }
}

/// Mixes several numbers into one seed (each round's and each case's generator is independent).
package func mixSeed(_ parts: UInt64...) -> UInt64 {
    var hash: UInt64 = 0x243F_6A88_85A3_08D3
    for part in parts { hash = fmix64(hash ^ part &+ 0x9E37_79B9_7F4A_7C15) }
    return hash
}

/// MurmurHash3's 64-bit finaliser: every input bit affects every output bit.
@inline(__always)
package func fmix64(_ x: UInt64) -> UInt64 {
    var mixed = x
    mixed ^= mixed >> 33
    mixed = mixed &* 0xFF51_AFD7_ED55_8CCD
    mixed ^= mixed >> 33
    mixed = mixed &* 0xC4CE_B9FE_1A85_EC53
    mixed ^= mixed >> 33
    return mixed
}
