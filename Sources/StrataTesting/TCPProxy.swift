import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback TCP proxy that drops connections on command, for the tests of a network failing
/// in the middle of a replication: a client connects to ``port`` on 127.0.0.1 and the proxy
/// forwards both directions to `targetPort` on 127.0.0.1, until told to cut.
///
/// Invariants:
/// - A cut resets every connection open at that moment: both sockets are closed with
///   `SO_LINGER` 0, so each peer gets a reset (no orderly end) and unsent bytes are dropped.
///   Connections accepted after a cut are forwarded as before: a client can reconnect and resume.
/// - ``cutAfter(bytes:)`` counts the bytes handed to the server's socket, client to server,
///   across connections: the proxy reads no more than the budget from clients, and cuts once
///   those bytes are all handed on (or after a second, should the server stop reading), so the
///   server gets exactly that many before the reset: a message can be cut in the middle.
/// - One thread runs everything (accepting, forwarding, cutting), so no socket is closed while
///   another thread waits on it. The caller's methods only change the shared state and wake that
///   thread; those that wait for it (``cutAll()``, ``stop()``) block the caller for as long as a
///   turn of its loop takes, and give up after 5 s rather than hang.
/// - The thread ends on ``stop()`` or when the proxy is released, closing every socket it opened.
package final class TCPProxy: Sendable {
    /// The port the proxy listens on, on 127.0.0.1.
    package let port: Int
    /// Where it forwards to, on 127.0.0.1.
    package let targetPort: Int
    private let control: Control

    /// A proxy to `targetPort` on 127.0.0.1, listening on a port of the system's choosing.
    package init(targetPort: Int) throws {
        self.targetPort = targetPort
        let listener = try Socket.listenOnLoopback()
        let wake: (read: Int32, write: Int32)
        do {
            port = try Socket.localPort(listener)
            wake = try Socket.pipe()
        } catch {
            close(listener)
            throw error
        }
        control = Control(wakeFD: wake.write)
        let loop = Loop(listener: listener, wakeFD: wake.read, targetPort: targetPort, control: control)
        let thread = Thread { loop.run() }
        thread.name = "TCPProxy :\(port) → :\(targetPort)"
        thread.start()
    }

    deinit { control.request { $0.stopping = true } }

    /// `url` with its `:PORT/` (the target's) replaced by the proxy's.
    package func proxied(_ url: String) -> String {
        url.replacingOccurrences(of: ":\(targetPort)/", with: ":\(port)/")
    }

    /// Resets every open connection now; returns when they are closed (or after 5 s).
    package func cutAll() {
        let wanted = control.request { state -> Int in
            state.cutsRequested += 1
            return state.cutsRequested
        }
        control.wait { $0.cutsDone >= wanted || $0.stopped }
    }

    /// Resets every open connection once `bytes` more bytes went from clients to the server
    /// (replacing a budget set before); `bytes` 0 cuts at the loop's next turn.
    package func cutAfter(bytes: Int) {
        precondition(bytes >= 0, "a byte budget cannot be negative")
        control.request { $0.budget = bytes }
    }

    /// Forgets a budget set by ``cutAfter(bytes:)`` that was not spent.
    package func disarm() {
        control.request { $0.budget = nil }
    }

    /// Whether a ``cutAfter(bytes:)`` budget is set and has not cut yet.
    package var isArmed: Bool { control.state.withLock { $0.budget != nil } }
    /// Bytes handed to the server so far, all connections together.
    package var bytesToServer: Int { control.state.withLock { $0.bytesToServer } }
    /// Bytes handed to clients so far.
    package var bytesToClient: Int { control.state.withLock { $0.bytesToClient } }
    /// Connections accepted so far.
    package var connectionsAccepted: Int { control.state.withLock { $0.accepted } }
    /// Connections reset by cuts so far.
    package var connectionsCut: Int { control.state.withLock { $0.cut } }
    /// Connections open now.
    package var openConnections: Int { control.state.withLock { $0.open } }

    /// Resets every connection, closes the listening socket and ends the thread; returns when it
    /// has (or after 5 s). Later connections are refused.
    package func stop() {
        control.request { $0.stopping = true }
        control.wait { $0.stopped }
    }
}

/// The state the caller's methods and the proxy's thread share, and the pipe that wakes the
/// thread from `poll` when the caller changed it.
private final class Control: Sendable {
    struct State {
        /// Bytes still forwarded to the server before the cut ``TCPProxy/cutAfter(bytes:)`` asked for.
        var budget: Int?
        /// ``TCPProxy/cutAll()`` calls, and how many of them the thread has carried out.
        var cutsRequested = 0
        var cutsDone = 0
        var stopping = false
        /// Set by the thread as it ends, its sockets closed.
        var stopped = false
        // What the public counters report.
        var bytesToServer = 0
        var bytesToClient = 0
        var accepted = 0
        var cut = 0
        var open = 0
    }

    let state = Mutex(State())
    /// The pipe's write end; the thread closes it when it ends (after `stopped`, so no request
    /// writes to a closed or reused descriptor: requests check `stopped` under the lock).
    private let wakeFD: Int32

    init(wakeFD: Int32) { self.wakeFD = wakeFD }

    /// Changes the state and wakes the thread.
    @discardableResult
    func request<T>(_ change: (inout State) -> T) -> T {
        state.withLock { state in
            let result = change(&state)
            if !state.stopped { Socket.wake(wakeFD) }
            return result
        }
    }

    /// Waits until `done` holds, 5 s at most: a proxy that stopped answering must fail the test
    /// that uses it, not hang the test process.
    func wait(until done: (State) -> Bool) {
        let deadline = ContinuousClock.now + .seconds(5)
        while !state.withLock({ done($0) }), ContinuousClock.now < deadline { usleep(1_000) }
    }

    /// Closes the pipe's write end once the thread has marked itself stopped.
    func closeWakeFD() { close(wakeFD) }
}

/// The proxy's thread: `poll` on the listening socket, the wake pipe and every connection's two
/// sockets (non-blocking), forwarding what one side sends to the other. A direction's bytes are
/// read only when the previous ones were all written, so a slow reader holds back its writer
/// (TCP's own flow control) instead of growing a buffer.
private final class Loop: @unchecked Sendable {
    // @unchecked: only the proxy's thread touches the mutable fields once `run` starts; the
    // initializer hands it descriptors and the Sendable `Control`.
    private let listener: Int32
    private let wakeFD: Int32
    private let targetPort: Int
    private let control: Control
    private var connections: [Connection] = []
    /// When the budget ran out, if bytes it allowed still wait for the server: cut after 1 s anyway.
    private var budgetSpentAt: ContinuousClock.Instant?
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    /// One proxied connection: its two sockets and, per direction, the bytes read and not yet written.
    private struct Connection {
        var client: Int32
        var server: Int32
        var toServer: [UInt8] = []
        var toClient: [UInt8] = []
    }

    init(listener: Int32, wakeFD: Int32, targetPort: Int, control: Control) {
        self.listener = listener
        self.wakeFD = wakeFD
        self.targetPort = targetPort
        self.control = control
    }

    func run() {
        while true {
            let (stopping, cutNow, budget) = control.state.withLock { state -> (Bool, Bool, Int?) in
                (state.stopping, state.cutsRequested > state.cutsDone, state.budget)
            }
            if stopping { break }
            if cutNow || budgetSpent(budget) {
                cutEverything()
                continue
            }
            turn(budget: budget)
        }
        cutEverything()
        close(listener)
        control.state.withLock { $0.stopped = true }
        close(wakeFD)
        control.closeWakeFD()
    }

    /// Whether a spent budget's bytes have all reached the server (or had 1 s to), so the cut is due.
    private func budgetSpent(_ budget: Int?) -> Bool {
        guard budget == 0 else { budgetSpentAt = nil; return false }
        let now = ContinuousClock.now
        if budgetSpentAt == nil { budgetSpentAt = now }
        return connections.allSatisfy { $0.toServer.isEmpty } || now - budgetSpentAt! > .seconds(1)
    }

    /// Records the cut as done, then resets every connection: in that order, so a caller that
    /// sees its connection reset also sees the cut (``TCPProxy/isArmed`` false), however the
    /// threads are scheduled.
    private func cutEverything() {
        let count = connections.count
        control.state.withLock { state in
            state.cut += count
            state.open = 0
            state.cutsDone = state.cutsRequested
            if state.budget == 0 { state.budget = nil }
        }
        for connection in connections {
            Socket.reset(connection.client)
            Socket.reset(connection.server)
        }
        connections.removeAll()
        budgetSpentAt = nil
    }

    /// One `poll` (100 ms at most, so a lost wake-up only delays) and what it found ready.
    private func turn(budget: Int?) {
        let clientRead = Int16(budget == 0 ? 0 : POLLIN)
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        for connection in connections {
            // Read a side only when what it sent before was all written; write it what waits.
            let pollOut = Int16(POLLOUT), pollIn = Int16(POLLIN)
            let client = (connection.toServer.isEmpty ? clientRead : 0) | (connection.toClient.isEmpty ? 0 : pollOut)
            let server = (connection.toClient.isEmpty ? pollIn : 0) | (connection.toServer.isEmpty ? 0 : pollOut)
            fds.append(pollfd(fd: connection.client, events: client, revents: 0))
            fds.append(pollfd(fd: connection.server, events: server, revents: 0))
        }
        let ready = poll(&fds, nfds_t(fds.count), 100)
        guard ready > 0 else { return }
        if fds[0].revents != 0 { Socket.drain(wakeFD, into: &scratch) }
        var closed: [Int] = []
        for index in connections.indices {
            let client = fds[2 + 2 * index].revents, server = fds[3 + 2 * index].revents
            if !service(index, client: client, server: server) { closed.append(index) }
        }
        for index in closed.reversed() {
            close(connections[index].client)
            close(connections[index].server)
            connections.remove(at: index)
        }
        if !closed.isEmpty { control.state.withLock { $0.open = connections.count } }
        // Last: a connection accepted now has no entry in this turn's `fds`.
        if fds[1].revents != 0 { accept() }
    }

    /// Moves what is ready on connection `index`; false when either side ended or failed (the
    /// other side is then closed too: PostgreSQL's protocol has no use for a half-open connection).
    private func service(_ index: Int, client: Int16, server: Int16) -> Bool {
        let failed = Int16(POLLERR | POLLNVAL)
        if client & failed != 0 || server & failed != 0 { return false }
        // Server to client.
        if server & Int16(POLLIN | POLLHUP) != 0, connections[index].toClient.isEmpty {
            guard let bytes = Socket.receive(connections[index].server, into: &scratch, limit: scratch.count) else {
                return false
            }
            connections[index].toClient = bytes
        }
        if !connections[index].toClient.isEmpty {
            guard let written = Socket.send(connections[index].client, connections[index].toClient) else { return false }
            connections[index].toClient.removeFirst(written)
            control.state.withLock { $0.bytesToClient += written }
        }
        // Client to server, within the budget.
        if client & Int16(POLLIN | POLLHUP) != 0, connections[index].toServer.isEmpty {
            let limit = control.state.withLock { $0.budget.map { min($0, scratch.count) } ?? scratch.count }
            if limit > 0 {
                guard let bytes = Socket.receive(connections[index].client, into: &scratch, limit: limit) else {
                    return false
                }
                control.state.withLock { state in
                    // Never below 0, should a new budget smaller than what was read come in meanwhile.
                    if let budget = state.budget { state.budget = max(0, budget - bytes.count) }
                }
                connections[index].toServer = bytes
            }
        }
        if !connections[index].toServer.isEmpty {
            guard let written = Socket.send(connections[index].server, connections[index].toServer) else { return false }
            connections[index].toServer.removeFirst(written)
            control.state.withLock { $0.bytesToServer += written }
        }
        return true
    }

    /// Accepts a client and connects it to the target; a target that refuses closes the client.
    private func accept() {
        guard let client = Socket.accept(listener) else { return }
        guard let server = Socket.connectToLoopback(port: targetPort) else {
            close(client)
            return
        }
        connections.append(Connection(client: client, server: server))
        control.state.withLock { state in
            state.accepted += 1
            state.open = connections.count
        }
    }
}

/// What the proxy asks of the system's sockets: the unsafe pointers stay in here.
private enum Socket {
    // Every descriptor is made close-on-exec (the tests spawn `psql` meanwhile): a child that
    // inherited a socket would keep its connection open through a cut. Sockets are made so;
    // accepted sockets and the pipe get the flag just after (Swift's Glibc has neither accept4
    // nor pipe2), a window in which the tests spawn nothing.
    #if canImport(Glibc)
    static let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    /// No SIGPIPE when the peer reset the connection: the error comes back from `send` instead.
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    static let streamType = SOCK_STREAM
    static let sendFlags: Int32 = 0
    #endif

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ what: String) { description = "TCPProxy: \(what) failed: \(String(cString: strerror(errno)))" }
    }

    /// A non-blocking socket listening on 127.0.0.1, on a port of the system's choosing.
    static func listenOnLoopback() throws -> Int32 {
        let fd = try stream()
        setNonBlocking(fd)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let failure = Failure("bind/listen")
            close(fd)
            throw failure
        }
        return fd
    }

    static func localPort(_ fd: Int32) throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw Failure("getsockname") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A pipe, both ends non-blocking: a wake-up never blocks the caller (a full pipe already
    /// holds one) and draining never blocks the thread.
    static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        #if canImport(Glibc)
        let made = Glibc.pipe(&fds)
        #else
        let made = Darwin.pipe(&fds)
        #endif
        guard made == 0 else { throw Failure("pipe") }
        for fd in fds {
            setNonBlocking(fd)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return (fds[0], fds[1])
    }

    static func wake(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    static func drain(_ fd: Int32, into buffer: inout [UInt8]) {
        let count = buffer.count
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, count) }) > 0 {}
    }

    static func accept(_ listener: Int32) -> Int32? {
        #if canImport(Glibc)
        let fd = Glibc.accept(listener, nil, nil)
        #else
        let fd = Darwin.accept(listener, nil, nil)
        #endif
        guard fd >= 0 else { return nil }
        configure(fd)
        return fd
    }

    /// A connection to 127.0.0.1:`port`, made blocking (immediate on loopback), then non-blocking.
    static func connectToLoopback(port: Int) -> Int32? {
        guard let fd = try? stream() else { return nil }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        configure(fd)
        return fd
    }

    /// Up to `limit` bytes the peer sent; `nil` at its end or on an error. Empty when none were
    /// ready after all (`EAGAIN`).
    static func receive(_ fd: Int32, into buffer: inout [UInt8], limit: Int) -> [UInt8]? {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min(limit, $0.count), 0) }
        if count > 0 { return Array(buffer[0..<count]) }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return [] }
        return nil
    }

    /// How many of `bytes` the socket took (0 when full); `nil` on an error.
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Int? {
        let count = bytes.withUnsafeBytes {
            #if canImport(Glibc)
            Glibc.send(fd, $0.baseAddress, $0.count, sendFlags)
            #else
            Darwin.send(fd, $0.baseAddress, $0.count, sendFlags)
            #endif
        }
        if count >= 0 { return count }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : nil
    }

    /// Closes with `SO_LINGER` 0: the peer gets a reset, as when a network path fails or a
    /// firewall drops the connection, not the orderly end of a close.
    static func reset(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }

    private static func stream() throws -> Int32 {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw Failure("socket") }
        #if !canImport(Glibc)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        #endif
        return fd
    }

    /// Non-blocking, close-on-exec, no Nagle delay (the proxy should add no latency), no SIGPIPE
    /// on Darwin.
    private static func configure(_ fd: Int32) {
        setNonBlocking(fd)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr = in_addr(s_addr: in_addr_t(0x7F00_0001).bigEndian)
        return address
    }
}
