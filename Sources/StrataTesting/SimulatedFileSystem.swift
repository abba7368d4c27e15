import StrataStorage
import Synchronization

/// An in-memory ``FileSystem`` for crash, I/O-fault and corruption tests (LevelDB's fault
/// injection `Env`, bbolt's failpoints, SQLite's crash VFS).
///
/// **Files.** Each file keeps a *durable image* (what survives a crash for certain) and the
/// list of writes and truncations made since its last `sync()`. Reads see every operation.
/// `sync()` applies the list to the durable image. (Stored as the current bytes plus undo
/// information per unsynced operation, so that a sync costs nothing.)
///
/// **Directory.** Creations, renames and removals change the visible namespace at once, but
/// become durable only with `syncDirectory(containing:)`. After a crash, an unsynced creation
/// is gone and an unsynced rename is undone (unless the crash policy says otherwise).
///
/// **Crash.** ``crash(seed:)`` / ``crash(policy:)`` turn the current state into a post-crash
/// state: every unsynced write is independently kept, dropped or torn (a prefix of it kept, or
/// some of its 512-byte sectors left old or filled with garbage), every unsynced truncation
/// kept or dropped; all locks are released and handles opened before the crash stop working.
/// ``crashAfter(operations:)`` arms a crash point: the next `N` mutating calls succeed, then
/// every call throws until ``crash(seed:)`` is called.
///
/// **Faults.** ``failAt(_:callIndex:fault:pathSuffix:)`` makes one call (counted per kind, from 1) fail
/// with `EIO`, `ENOSPC` or as a short write; ``capacity`` simulates a full disk.
///
/// Thread-safe: one mutex guards all state.
package final class SimulatedFileSystem: FileSystem, @unchecked Sendable {
    /// The kinds of call that are counted (and can be made to fail).
    package enum Operation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// One case per ``FileSystem`` and ``StorageFile`` call; `lock` counts exclusive and shared locks.
        case open, read, write, sync, size, truncate, rename, remove, syncDirectory, lock

        /// Calls that change files or the namespace: the crash points.
        package var isMutating: Bool {
            switch self {
            case .write, .sync, .truncate, .rename, .remove, .syncDirectory: return true
            case .open, .read, .size, .lock: return false
            }
        }

        /// The case's name.
        package var description: String { rawValue }

        /// The case's position in `allCases` (counters are stored in that order).
        package var index: Int {
            switch self {
            case .open: return 0
            case .read: return 1
            case .write: return 2
            case .sync: return 3
            case .size: return 4
            case .truncate: return 5
            case .rename: return 6
            case .remove: return 7
            case .syncDirectory: return 8
            case .lock: return 9
            }
        }
    }

    /// What an injected failure does.
    package enum Fault: Sendable, Equatable, CustomStringConvertible {
        /// Nothing happens; the call throws ``StrataError/ioFailure(operation:path:errno:)`` (EIO).
        case ioError
        /// Nothing happens; the call throws ``StrataError/diskFull(path:)`` (ENOSPC).
        case diskFull
        /// Writes only: the first `bytes` bytes (half when `nil`) are written, then the call
        /// throws ``StrataError/diskFull(path:)``. On other calls it acts as `diskFull`.
        case shortWrite(bytes: Int?)

        /// `EIO`, `ENOSPC` or `short write(n)`, for test logs.
        package var description: String {
            switch self {
            case .ioError: return "EIO"
            case .diskFull: return "ENOSPC"
            case .shortWrite(let bytes): return "short write(\(bytes.map(String.init) ?? "half"))"
            }
        }
    }

    /// What happens to unsynced directory operations at a crash.
    package enum DirectoryFate: Sendable, Equatable {
        /// All lost: unsynced creations vanish, unsynced renames and removals are undone.
        case lost
        /// A random prefix of them survives (a journaling file system may commit them any time).
        case randomPrefix
        /// All survive.
        case kept
    }

    /// How a crash treats unsynced data.
    package struct CrashPolicy: Sendable {
        /// Seeds the random choices, so that the same policy and seed give the same crash.
        package var seed: UInt64
        /// Probability that an unsynced write (or truncation) survives whole.
        package var keepProbability: Double
        /// Probability that it is lost entirely. The rest are torn (truncations are never torn:
        /// they are kept or lost).
        package var dropProbability: Double
        /// Of the torn writes, the fraction torn sector by sector (each 512-byte sector new, old
        /// or garbage) rather than cut to a prefix.
        package var sectorTearFraction: Double
        /// What happens to unsynced directory operations.
        package var directory: DirectoryFate

        /// A policy with these probabilities; by default unsynced directory operations are lost.
        package init(seed: UInt64, keepProbability: Double = 0.4, dropProbability: Double = 0.3,
                    sectorTearFraction: Double = 0.5, directory: DirectoryFate = .lost) {
            self.seed = seed
            self.keepProbability = keepProbability
            self.dropProbability = dropProbability
            self.sectorTearFraction = sectorTearFraction
            self.directory = directory
        }

        /// Every unsynced operation survives (a process crash, not a power failure).
        package static func keepAll(directory: DirectoryFate = .kept) -> CrashPolicy {
            CrashPolicy(seed: 0, keepProbability: 1, dropProbability: 0, directory: directory)
        }

        /// Every unsynced operation is lost.
        package static var dropAll: CrashPolicy { CrashPolicy(seed: 0, keepProbability: 0, dropProbability: 1) }
    }

    /// What a crash did, for test diagnostics.
    package struct CrashSummary: Sendable, CustomStringConvertible {
        /// Unsynced writes and truncations that survived whole.
        package var kept = 0
        /// Unsynced writes and truncations that were lost.
        package var dropped = 0
        /// Unsynced writes that were torn.
        package var torn = 0
        /// `kept K, dropped D, torn T`.
        package var description: String { "kept \(kept), dropped \(dropped), torn \(torn)" }
    }

    /// The size in bytes of the sectors a write is torn by.
    package static let sectorSize = 512
    /// Files may not grow beyond this (a corrupt length must fail, not allocate terabytes).
    package static let maxFileSize = 1 << 34

    // MARK: State

    // Mutated only under `state`'s lock.
    final class Node: @unchecked Sendable {
        /// What reads see: the durable image with every pending operation applied.
        var current: [UInt8]
        /// Operations since the last sync, oldest first, each with what it replaced.
        var pending: [Pending] = []

        init(current: [UInt8], pending: [Pending] = []) {
            self.current = current
            self.pending = pending
        }

        /// The durable image: `current` with every pending operation undone.
        var durable: [UInt8] {
            var image = current
            for op in pending.reversed() {
                switch op {
                case .write(let offset, _, let old, let oldLength):
                    SimulatedFileSystem.resize(&image, to: oldLength)
                    SimulatedFileSystem.apply(&image, old[...], at: offset)
                case .truncate(let length, let oldLength, let removed):
                    if length < oldLength {
                        SimulatedFileSystem.apply(&image, removed[...], at: length)
                    } else {
                        SimulatedFileSystem.resize(&image, to: oldLength)
                    }
                }
            }
            return image
        }
    }

    enum Pending {
        /// `old`: the bytes the write replaced (up to the old end); `oldLength`: the length before.
        case write(offset: Int, bytes: [UInt8], old: [UInt8], oldLength: Int)
        /// `removed`: the bytes a shrinking truncation cut off.
        case truncate(Int, oldLength: Int, removed: [UInt8])
    }

    /// One directory operation: the names it sets (to a node) or clears (`nil`), atomically.
    struct DirectoryOp {
        var changes: [(name: String, node: Node?)]
    }

    struct Failpoint {
        var kind: Operation
        /// `nil`: every call of this kind fails.
        var callIndex: Int?
        var fault: Fault
        var pathSuffix: String?
    }

    struct LockEntry {
        var exclusive: Bool
        var holders: Set<Int>
    }

    struct State {
        var names: [String: Node] = [:]
        var durableNames: [String: Node] = [:]
        var pendingDirectoryOps: [DirectoryOp] = []
        var generation = 0
        /// Calls per kind, indexed by `Operation.index`.
        var counts = [Int](repeating: 0, count: Operation.allCases.count)
        var mutations = 0
        var failpoints: [Failpoint] = []
        /// Mutating calls still allowed before the armed crash point trips.
        var crashBudget: Int?
        var tripped = false
        var locks: [String: LockEntry] = [:]
        var nextLockID = 1
        var capacity: Int?
        var observer: (@Sendable (Int, Operation) -> Void)?
        var lastMutatedPath: String?
    }

    let state: Mutex<State>

    /// An empty file system, with no faults set and no crash point armed.
    package init() {
        state = Mutex(State())
    }

    // MARK: Test controls

    /// Number of calls of `kind` so far.
    package func count(of kind: Operation) -> Int { state.withLock { $0.counts[kind.index] } }

    /// Calls per kind so far.
    package var counts: [Operation: Int] {
        state.withLock { locked in
            Dictionary(uniqueKeysWithValues: Operation.allCases.map { ($0, locked.counts[$0.index]) })
        }
    }

    /// Mutating calls so far (writes, syncs, truncations, renames, removals, directory syncs).
    package var mutationCount: Int { state.withLock { $0.mutations } }

    /// Sets every counter (and the mutation count) back to zero.
    package func resetCounters() {
        state.withLock {
            $0.counts = [Int](repeating: 0, count: Operation.allCases.count)
            $0.mutations = 0
        }
    }

    /// Makes call number `callIndex` (1-based, counted like ``count(of:)``) of `kind` fail,
    /// optionally only on paths ending in `pathSuffix` (it still counts every call).
    package func failAt(_ kind: Operation, callIndex: Int, fault: Fault = .ioError, pathSuffix: String? = nil) {
        state.withLock {
            $0.failpoints.append(Failpoint(kind: kind, callIndex: callIndex, fault: fault, pathSuffix: pathSuffix))
        }
    }

    /// Makes every later call of `kind` fail until ``clearFaults()``.
    package func failAlways(_ kind: Operation, fault: Fault = .ioError, pathSuffix: String? = nil) {
        state.withLock {
            $0.failpoints.append(Failpoint(kind: kind, callIndex: nil, fault: fault, pathSuffix: pathSuffix))
        }
    }

    /// Removes every fault ``failAt(_:callIndex:fault:pathSuffix:)`` and
    /// ``failAlways(_:fault:pathSuffix:)`` set.
    package func clearFaults() { state.withLock { $0.failpoints = [] } }

    /// Total bytes all files may hold; growing past it fails with `ENOSPC` (a write writes what
    /// fits first). `nil`: unlimited.
    package var capacity: Int? {
        get { state.withLock { $0.capacity } }
        set { state.withLock { $0.capacity = newValue } }
    }

    /// Arms a crash point: the next `operations` mutating calls succeed; the one after and every
    /// later call (of any kind) throws `EIO` until ``crash(seed:)``.
    package func crashAfter(operations: Int) {
        state.withLock {
            $0.crashBudget = max(0, operations)
            $0.tripped = false
        }
    }

    /// Whether an armed crash point has been reached.
    package var hasCrashed: Bool { state.withLock { $0.tripped } }

    /// Called after every successful mutating call with the mutation count and the kind, outside
    /// the lock, on the calling thread. Tests use it to fork the state at every crash point.
    package func onMutation(_ body: (@Sendable (Int, Operation) -> Void)?) {
        state.withLock { $0.observer = body }
    }

    /// The path of the most recent successful mutating call (for observers that filter by file).
    package var lastMutatedPath: String? { state.withLock { $0.lastMutatedPath } }

    /// Names of the files that exist now, sorted.
    package var fileNames: [String] { state.withLock { $0.names.keys.sorted() } }

    /// The bytes of `path` as reads see them now, or `nil` if it does not exist.
    package func contents(of path: String) -> [UInt8]? { state.withLock { $0.names[path]?.current } }

    /// The durable bytes of the file durably named `path` (what a crash dropping every unsynced
    /// operation would leave), or `nil`.
    package func durableContents(of path: String) -> [UInt8]? { state.withLock { $0.durableNames[path]?.durable } }

    /// Creates or replaces `path` with `bytes`, durably (contents and name).
    package func setContents(_ bytes: [UInt8], of path: String) {
        state.withLock {
            let node = Node(current: bytes)
            $0.names[path] = node
            $0.durableNames[path] = node
        }
    }

    /// An independent copy of the whole state (files, durable images, unsynced operations,
    /// namespace). Counters start at zero; faults, crash points, observers and locks are not copied.
    package func clone() -> SimulatedFileSystem {
        let copy = SimulatedFileSystem()
        state.withLock { locked in
            var map: [ObjectIdentifier: Node] = [:]
            func dup(_ node: Node) -> Node {
                if let duplicate = map[ObjectIdentifier(node)] { return duplicate }
                let duplicate = Node(current: node.current, pending: node.pending)
                map[ObjectIdentifier(node)] = duplicate
                return duplicate
            }
            let names = locked.names.mapValues(dup)
            let durableNames = locked.durableNames.mapValues(dup)
            let ops = locked.pendingDirectoryOps.map { op in
                DirectoryOp(changes: op.changes.map { ($0.name, $0.node.map(dup)) })
            }
            let capacity = locked.capacity
            copy.state.withLock { copied in
                copied.names = names
                copied.durableNames = durableNames
                copied.pendingDirectoryOps = ops
                copied.capacity = capacity
            }
        }
        return copy
    }

    /// Simulates a power failure with the default policy for `seed`.
    @discardableResult
    package func crash(seed: UInt64) -> CrashSummary { crash(policy: CrashPolicy(seed: seed)) }

    /// Simulates a power failure: see ``CrashPolicy``.
    @discardableResult
    package func crash(policy: CrashPolicy) -> CrashSummary {
        var rng = SplitMix64(seed: policy.seed)
        var summary = CrashSummary()
        state.withLock { locked in
            // The namespace: durable names, plus whatever unsynced directory operations survive.
            var names = locked.durableNames
            let surviving: Int
            switch policy.directory {
            case .lost: surviving = 0
            case .kept: surviving = locked.pendingDirectoryOps.count
            case .randomPrefix: surviving = Int(rng.next() % UInt64(locked.pendingDirectoryOps.count + 1))
            }
            for op in locked.pendingDirectoryOps.prefix(surviving) {
                for change in op.changes { names[change.name] = change.node }
            }
            // Each surviving file: its durable image plus the unsynced operations that survive.
            var rebuilt: [ObjectIdentifier: Node] = [:]
            var result: [String: Node] = [:]
            for name in names.keys.sorted() {
                let node = names[name]!
                if let done = rebuilt[ObjectIdentifier(node)] {
                    result[name] = done
                    continue
                }
                var image = node.durable
                for op in node.pending {
                    let roll = rng.unit()
                    switch op {
                    case .truncate(let length, _, _):
                        if roll < policy.keepProbability + (1 - policy.keepProbability - policy.dropProbability) / 2 {
                            SimulatedFileSystem.resize(&image, to: length)
                            summary.kept += 1
                        } else {
                            summary.dropped += 1
                        }
                    case .write(let offset, let bytes, _, _):
                        if roll < policy.keepProbability {
                            SimulatedFileSystem.apply(&image, bytes[...], at: offset)
                            summary.kept += 1
                        } else if roll < policy.keepProbability + policy.dropProbability {
                            summary.dropped += 1
                        } else {
                            summary.torn += 1
                            SimulatedFileSystem.tear(&image, bytes, at: offset, policy: policy, rng: &rng)
                        }
                    }
                }
                let fresh = Node(current: image)
                rebuilt[ObjectIdentifier(node)] = fresh
                result[name] = fresh
            }
            locked.names = result
            locked.durableNames = result
            locked.pendingDirectoryOps = []
            locked.generation += 1
            locked.locks = [:]
            locked.crashBudget = nil
            locked.tripped = false
        }
        return summary
    }

    private static func tear(_ image: inout [UInt8], _ bytes: [UInt8], at offset: Int, policy: CrashPolicy,
                             rng: inout SplitMix64) {
        guard !bytes.isEmpty else { return }
        let end = offset + bytes.count
        if rng.unit() >= policy.sectorTearFraction {
            // A prefix, cut at a sector boundary when the write spans one.
            var cuts: [Int] = []
            var boundary = (offset / sectorSize + 1) * sectorSize
            while boundary < end { cuts.append(boundary); boundary += sectorSize }
            let cut = cuts.isEmpty
                ? offset + Int(rng.next() % UInt64(bytes.count)) : cuts[Int(rng.next() % UInt64(cuts.count))]
            if cut > offset { apply(&image, bytes[0..<(cut - offset)], at: offset) }
            return
        }
        // Sector by sector: new bytes, old bytes, or garbage (only inside the written range).
        var start = offset
        while start < end {
            let sectorEnd = min(end, (start / sectorSize + 1) * sectorSize)
            let roll = rng.next() % 3
            if roll == 0 {
                apply(&image, bytes[(start - offset)..<(sectorEnd - offset)], at: start)
            } else if roll == 1 {
                var garbage = [UInt8](repeating: 0, count: sectorEnd - start)
                for i in garbage.indices { garbage[i] = UInt8(truncatingIfNeeded: rng.next()) }
                apply(&image, garbage[...], at: start)
            } else if image.count < sectorEnd {
                // Old bytes: where the file did not reach, the length still grows (zeros).
                resize(&image, to: max(image.count, sectorEnd))
            }
            start = sectorEnd
        }
    }

    static func apply(_ image: inout [UInt8], _ bytes: ArraySlice<UInt8>, at offset: Int) {
        let end = offset + bytes.count
        if image.count < end { resize(&image, to: end) }
        guard !bytes.isEmpty else { return }
        image.withUnsafeMutableBytes { destination in
            bytes.withUnsafeBytes { source in
                (destination.baseAddress! + offset).copyMemory(from: source.baseAddress!, byteCount: source.count)
            }
        }
    }

    static func copy(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, initialized in
            if bytes.count > 0 {
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: bytes.baseAddress!,
                                                                        byteCount: bytes.count)
            }
            initialized = bytes.count
        }
    }

    static func resize(_ image: inout [UInt8], to length: Int) {
        // Bulk memory operations only: element loops are slow in debug builds.
        if length == image.count { return }
        if length < image.count {
            image.removeSubrange(length...)
            return
        }
        if image.capacity >= length {
            // Grow in place: append zeros from a zeroed buffer (one bulk copy).
            let zeros = [UInt8](unsafeUninitializedCapacity: length - image.count) { buffer, initialized in
                UnsafeMutableRawPointer(buffer.baseAddress!).initializeMemory(as: UInt8.self, repeating: 0,
                                                                              count: buffer.count)
                initialized = buffer.count
            }
            image.append(contentsOf: zeros)
            return
        }
        let keep = min(length, image.count)
        image = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            image.withUnsafeBytes { old in
                if keep > 0 {
                    UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: old.baseAddress!, byteCount: keep)
                }
            }
            if length > keep {
                (UnsafeMutableRawPointer(buffer.baseAddress!) + keep).initializeMemory(as: UInt8.self, repeating: 0,
                                                                                       count: length - keep)
            }
            initialized = length
        }
    }

    // MARK: Call accounting

    private func fail(_ fault: Fault, _ kind: Operation, _ path: String) -> StrataError {
        switch fault {
        case .ioError: return .ioFailure(operation: kind.rawValue, path: path, errno: 5)
        case .diskFull, .shortWrite: return .diskFull(path: path)
        }
    }

    /// Counts the call, trips an armed crash point, and returns the fault to inject, if any.
    /// Requires the lock.
    private func begin(_ locked: inout State, _ kind: Operation, _ path: String) throws -> Fault? {
        let callNumber = locked.counts[kind.index] + 1
        locked.counts[kind.index] = callNumber
        if locked.tripped {
            throw StrataError.ioFailure(operation: kind.rawValue + " after simulated crash", path: path, errno: 5)
        }
        if kind.isMutating {
            if let budget = locked.crashBudget {
                if budget == 0 {
                    locked.tripped = true
                    throw StrataError.ioFailure(operation: kind.rawValue + " at simulated crash", path: path, errno: 5)
                }
                locked.crashBudget = budget - 1
            }
            locked.mutations += 1
        }
        if locked.failpoints.isEmpty { return nil }
        for (i, failpoint) in locked.failpoints.enumerated() where failpoint.kind == kind {
            if let suffix = failpoint.pathSuffix, !path.hasSuffix(suffix) { continue }
            if let index = failpoint.callIndex {
                if index != callNumber { continue }
                locked.failpoints.remove(at: i)
            }
            return failpoint.fault
        }
        return nil
    }

    /// Runs a mutating call under the lock, then tells the observer.
    private func mutate<T>(_ kind: Operation, _ path: String, _ body: (inout State, Fault?) throws -> T) throws -> T {
        let (result, observer, count) = try state.withLock {
            locked -> (T, (@Sendable (Int, Operation) -> Void)?, Int) in
            let fault = try begin(&locked, kind, path)
            let value = try body(&locked, fault)
            locked.lastMutatedPath = path
            return (value, locked.observer, locked.mutations)
        }
        observer?(count, kind)
        return result
    }

    private func totalBytes(_ locked: State) -> Int {
        var seen = Set<ObjectIdentifier>()
        var total = 0
        for node in locked.names.values where seen.insert(ObjectIdentifier(node)).inserted {
            total += node.current.count
        }
        return total
    }

    // MARK: FileSystem

    /// Opens `path`; a file `.create` makes is visible at once, durable after ``syncDirectory(containing:)``.
    package func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        try state.withLock { locked in
            if let fault = try begin(&locked, .open, path) { throw fail(fault, .open, path) }
            if let node = locked.names[path] {
                return SimulatedFile(fs: self, node: node, path: path, generation: locked.generation,
                                     writable: mode != .readOnly)
            }
            guard mode == .create else { throw StrataError.ioFailure(operation: "open", path: path, errno: 2) }
            let node = Node(current: [])
            locked.names[path] = node
            locked.pendingDirectoryOps.append(DirectoryOp(changes: [(path, node)]))
            return SimulatedFile(fs: self, node: node, path: path, generation: locked.generation, writable: true)
        }
    }

    /// Whether `path` is in the visible namespace, durable or not.
    package func fileExists(_ path: String) -> Bool { state.withLock { $0.names[path] != nil } }

    /// The node at `path`, as an inode number (its object identity; device 0).
    package func identity(of path: String) -> FileIdentity? {
        state.withLock { $0.names[path].map(SimulatedFileSystem.identity(of:)) }
    }

    static func identity(of node: Node) -> FileIdentity {
        FileIdentity(device: 0, inode: UInt64(UInt(bitPattern: ObjectIdentifier(node).hashValue)))
    }

    /// Moves `source` to `destination` in the visible namespace; durable after ``syncDirectory(containing:)``.
    package func rename(_ source: String, to destination: String) throws {
        try mutate(.rename, source) { locked, fault in
            if let fault { throw fail(fault, .rename, source) }
            guard let node = locked.names[source] else {
                throw StrataError.ioFailure(operation: "rename", path: source, errno: 2)
            }
            locked.names[source] = nil
            locked.names[destination] = node
            locked.pendingDirectoryOps.append(DirectoryOp(changes: [(source, nil), (destination, node)]))
        }
    }

    /// Removes `path` from the visible namespace (a missing path is not an error); durable after
    /// ``syncDirectory(containing:)``.
    package func remove(_ path: String) throws {
        try mutate(.remove, path) { locked, fault in
            if let fault { throw fail(fault, .remove, path) }
            guard locked.names[path] != nil else { return }
            locked.names[path] = nil
            locked.pendingDirectoryOps.append(DirectoryOp(changes: [(path, nil)]))
        }
    }

    /// Makes the pending creations, renames and removals that touch the directory of `path` durable.
    package func syncDirectory(containing path: String) throws {
        let dir = simDirectoryName(of: path)
        try mutate(.syncDirectory, path) { locked, fault in
            if let fault { throw fail(fault, .syncDirectory, dir) }
            var rest: [DirectoryOp] = []
            for op in locked.pendingDirectoryOps {
                if op.changes.contains(where: { simDirectoryName(of: $0.name) == dir }) {
                    for change in op.changes { locked.durableNames[change.name] = change.node }
                } else {
                    rest.append(op)
                }
            }
            locked.pendingDirectoryOps = rest
        }
    }

    /// Takes an exclusive lock on `path`; throws ``StrataError/locked(path:)`` when anyone holds one.
    package func lockExclusive(_ path: String) throws -> any FileLock { try lock(path, exclusive: true) }
    /// Takes a shared lock on `path`; throws ``StrataError/locked(path:)`` when an exclusive one is held.
    package func lockShared(_ path: String) throws -> any FileLock { try lock(path, exclusive: false) }

    private func lock(_ path: String, exclusive: Bool) throws -> any FileLock {
        try state.withLock { locked in
            if let fault = try begin(&locked, .lock, path) { throw fail(fault, .lock, path) }
            let id = locked.nextLockID
            locked.nextLockID += 1
            if var entry = locked.locks[path], !entry.holders.isEmpty {
                if exclusive || entry.exclusive { throw StrataError.locked(path: path) }
                entry.holders.insert(id)
                locked.locks[path] = entry
            } else {
                locked.locks[path] = LockEntry(exclusive: exclusive, holders: [id])
            }
            return SimulatedLock(fs: self, path: path, id: id, generation: locked.generation)
        }
    }

    /// Whether some holder has a lock on `path` now.
    package func isLocked(_ path: String) -> Bool { state.withLock { !($0.locks[path]?.holders.isEmpty ?? true) } }

    func unlock(_ path: String, id: Int, generation: Int) {
        state.withLock { locked in
            guard locked.generation == generation, var entry = locked.locks[path] else { return }
            entry.holders.remove(id)
            locked.locks[path] = entry.holders.isEmpty ? nil : entry
        }
    }

    // MARK: File operations

    private func checkHandle(_ locked: State, _ file: SimulatedFile, _ kind: Operation) throws {
        if file.isClosed {
            throw StrataError.ioFailure(operation: kind.rawValue + " on closed file", path: file.path, errno: 9)
        }
        if file.generation != locked.generation {
            throw StrataError.ioFailure(operation: kind.rawValue + " on a handle from before a simulated crash",
                                        path: file.path, errno: 5)
        }
    }

    func read(_ file: SimulatedFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try state.withLock { locked in
            if let fault = try begin(&locked, .read, file.path) { throw fail(fault, .read, file.path) }
            try checkHandle(locked, file, .read)
            let current = file.node.current
            guard buffer.count > 0, offset < UInt64(current.count) else { return 0 }
            let start = Int(offset)
            let length = min(buffer.count, current.count - start)
            current.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: length)
            }
            return length
        }
    }

    func write(_ file: SimulatedFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try mutate(.write, file.path) { locked, fault in
            try checkHandle(locked, file, .write)
            guard file.writable else {
                throw StrataError.ioFailure(operation: "write on read-only file", path: file.path, errno: 9)
            }
            guard offset <= UInt64(SimulatedFileSystem.maxFileSize),
                  bytes.count <= SimulatedFileSystem.maxFileSize - Int(offset) else {
                throw StrataError.ioFailure(operation: "write", path: file.path, errno: 27)
            }
            let start = Int(offset)
            var count = bytes.count
            var error: StrataError?
            if let fault {
                switch fault {
                case .shortWrite(let bytes):
                    count = min(count, max(0, bytes ?? count / 2))
                    error = .diskFull(path: file.path)
                default:
                    throw fail(fault, .write, file.path)
                }
            }
            if let capacity = locked.capacity {
                let growth = max(0, start + count - file.node.current.count)
                let room = max(0, capacity - totalBytes(locked))
                if growth > room {
                    // Write what fits (a real short write), then report the full disk.
                    count = max(0, min(count, file.node.current.count + room - start))
                    error = .diskFull(path: file.path)
                }
            }
            if count > 0 {
                let data = SimulatedFileSystem.copy(UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
                let oldLength = file.node.current.count
                let old = start >= oldLength ? [] : file.node.current.withUnsafeBytes {
                    SimulatedFileSystem.copy(UnsafeRawBufferPointer(
                        rebasing: $0[start..<min(oldLength, start + count)]))
                }
                SimulatedFileSystem.apply(&file.node.current, data[...], at: start)
                file.node.pending.append(.write(offset: start, bytes: data, old: old, oldLength: oldLength))
            }
            if let error { throw error }
        }
    }

    func sync(_ file: SimulatedFile) throws {
        try mutate(.sync, file.path) { locked, fault in
            try checkHandle(locked, file, .sync)
            if let fault { throw fail(fault, .sync, file.path) }
            file.node.pending = []
        }
    }

    func size(_ file: SimulatedFile) throws -> UInt64 {
        try state.withLock { locked in
            if let fault = try begin(&locked, .size, file.path) { throw fail(fault, .size, file.path) }
            try checkHandle(locked, file, .size)
            return UInt64(file.node.current.count)
        }
    }

    func truncate(_ file: SimulatedFile, to length: UInt64) throws {
        try mutate(.truncate, file.path) { locked, fault in
            try checkHandle(locked, file, .truncate)
            guard file.writable else {
                throw StrataError.ioFailure(operation: "truncate on read-only file", path: file.path, errno: 9)
            }
            if let fault { throw fail(fault, .truncate, file.path) }
            guard length <= UInt64(SimulatedFileSystem.maxFileSize) else {
                throw StrataError.ioFailure(operation: "truncate", path: file.path, errno: 27)
            }
            let newLength = Int(length)
            if let capacity = locked.capacity, newLength > file.node.current.count,
               newLength - file.node.current.count > capacity - totalBytes(locked) {
                throw StrataError.diskFull(path: file.path)
            }
            let oldLength = file.node.current.count
            let removed = newLength >= oldLength ? [] : file.node.current.withUnsafeBytes {
                SimulatedFileSystem.copy(UnsafeRawBufferPointer(rebasing: $0[newLength...]))
            }
            SimulatedFileSystem.resize(&file.node.current, to: newLength)
            file.node.pending.append(.truncate(newLength, oldLength: oldLength, removed: removed))
        }
    }
}

private func simDirectoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

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
