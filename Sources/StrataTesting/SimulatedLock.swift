import StrataStorage
import Synchronization

final class SimulatedLock: FileLock, @unchecked Sendable {
    let fs: SimulatedFileSystem
    let path: String
    let id: Int
    let generation: Int
    private let released = Atomic<Bool>(false)

    init(fs: SimulatedFileSystem, path: String, id: Int, generation: Int) {
        self.fs = fs
        self.path = path
        self.id = id
        self.generation = generation
    }

    func unlock() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) {
            fs.unlock(path, id: id, generation: generation)
        }
    }

    deinit { unlock() }
}
