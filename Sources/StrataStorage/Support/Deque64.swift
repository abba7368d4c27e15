/// A ring buffer of offsets (no dependency needed for this one use).
struct Deque64 {
    private var storage: [UInt64] = []
    private var head = 0

    mutating func append(_ offset: UInt64) {
        storage.append(offset)
    }

    mutating func popFirst() -> UInt64? {
        guard head < storage.count else { return nil }
        let first = storage[head]
        head += 1
        if head > 1024 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return first
    }
}
