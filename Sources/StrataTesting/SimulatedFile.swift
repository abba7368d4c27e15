import StrataStorage
import Synchronization

/// A handle on one simulated file. Bound to its node, so it follows renames and keeps an
/// unlinked file readable, like a POSIX descriptor.
final class SimulatedFile: StorageFile, @unchecked Sendable {
    let fs: SimulatedFileSystem
    let node: SimulatedFileSystem.Node
    let path: String
    let generation: Int
    let writable: Bool
    private let closedFlag = Atomic<Bool>(false)

    init(fs: SimulatedFileSystem, node: SimulatedFileSystem.Node, path: String, generation: Int, writable: Bool) {
        self.fs = fs
        self.node = node
        self.path = path
        self.generation = generation
        self.writable = writable
    }

    var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try fs.read(self, into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws { try fs.write(self, bytes, at: offset) }
    func sync() throws { try fs.sync(self) }
    func size() throws -> UInt64 { try fs.size(self) }
    /// Its node's identity: a renamed-over path shows another.
    var identity: FileIdentity? { SimulatedFileSystem.identity(of: node) }
    func truncate(to length: UInt64) throws { try fs.truncate(self, to: length) }
    func close() { closedFlag.store(true, ordering: .releasing) }
}
