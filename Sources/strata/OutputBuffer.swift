/// Buffered stdout for commands that print many lines (`dump`): one `print` per 64 KiB
/// instead of one per line.
final class OutputBuffer {
    private var buffer = ""

    func write(_ text: String) {
        buffer += text
        if buffer.utf8.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        print(buffer, terminator: "")
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
