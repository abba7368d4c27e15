/// Fixed limits of the format and the engine.
public enum StoreLimits {
    /// The longest key, in bytes. Keys must also be non-empty.
    public static let maxKeyLength = 1024
    /// The longest value, in bytes (64 MiB). Values above a page's inline limit live in overflow frames.
    public static let maxValueLength = 64 << 20
    /// The longest tree name, in UTF-8 bytes.
    public static let maxTreeNameLength = 255
    /// Tree ids are below this (2^32 − 2), so the next id, one more, stays below 2^32 − 1
    /// (FORMAT.md §5): a store can create this many trees, dropped ones included, over its life.
    public static let treeIDLimit: UInt32 = .max - 1
}
