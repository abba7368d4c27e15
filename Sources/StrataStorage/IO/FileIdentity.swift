/// Which file a path or an open descriptor is (device and inode): tells a store's file from the
/// one another process's compaction renamed over its path.
public struct FileIdentity: Hashable, Sendable {
    /// The device holding the file (`st_dev`).
    public var device: UInt64
    /// The file's inode number (`st_ino`).
    public var inode: UInt64

    /// The identity of the file on `device` numbered `inode`.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}
