/// Admits one write transaction at a time, first come first served.
///
/// Threads wait on a condition variable; tasks suspend on a continuation, so an `async` writer
/// never blocks a thread of Swift's cooperative pool while it waits.
final class WriterGate: @unchecked Sendable {
    private let condition = Condition()
    // Guarded by `condition`.
    private var held = false
    private var waiters: [Waiter] = []
    private var nextTicket: UInt64 = 0

    private enum Waiter {
        case thread(ticket: UInt64)
        case task(CheckedContinuation<Void, Never>)
    }
    /// Tickets of blocked threads that have been handed the gate.
    private var granted: Set<UInt64> = []

    func lock() {
        condition.lock()
        defer { condition.unlock() }
        if !held && waiters.isEmpty {
            held = true
            return
        }
        let ticket = nextTicket
        nextTicket += 1
        waiters.append(.thread(ticket: ticket))
        while !granted.contains(ticket) { condition.wait() }
        granted.remove(ticket)
    }

    /// Takes the gate if it is free and nobody waits; false otherwise (never waits).
    func tryLock() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if held || !waiters.isEmpty { return false }
        held = true
        return true
    }

    func lockAsync() async {
        condition.lock()
        if !held && waiters.isEmpty {
            held = true
            condition.unlock()
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiters.append(.task(continuation))
            condition.unlock()
        }
    }

    /// Hands the gate to the next waiter (it stays held) or opens it.
    func unlock() {
        condition.lock()
        guard !waiters.isEmpty else {
            held = false
            condition.unlock()
            return
        }
        let next = waiters.removeFirst()
        switch next {
        case .thread(let ticket):
            granted.insert(ticket)
            condition.broadcast()
            condition.unlock()
        case .task(let continuation):
            condition.unlock()
            continuation.resume()
        }
    }
}
