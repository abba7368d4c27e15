/// FNV-1a over the shape's parts: the cache hashes a request on every fetch, and SipHash
/// (`Hasher`) costs several times more for the short strings a shape holds. Collisions only
/// cost a comparison (shapes are compared after the hash matches), and the process's own
/// requests are hashed, not an adversary's.
struct ShapeHasher {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func combine(_ word: UInt64) {
        value = (value ^ word) &* 0x0000_0100_0000_01B3
    }

    mutating func combine(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        }
        combine(0xFF)   // ends the string: "ab" + "c" is not "a" + "bc"
    }
}
