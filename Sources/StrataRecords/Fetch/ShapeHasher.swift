/// FNV-1a over the shape's parts: the cache hashes a request on every fetch, and SipHash
/// (`Hasher`) costs several times more for the short strings a shape holds. Collisions only
/// cost a comparison (shapes are compared after the hash matches), and the process's own
/// requests are hashed, not an adversary's.
struct ShapeHasher {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func combine(_ x: UInt64) {
        value = (value ^ x) &* 0x0000_0100_0000_01B3
    }

    mutating func combine(_ s: String) {
        var s = s
        s.withUTF8 { bytes in
            for b in bytes { value = (value ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        }
        combine(0xFF)   // ends the string: "ab" + "c" is not "a" + "bc"
    }
}
