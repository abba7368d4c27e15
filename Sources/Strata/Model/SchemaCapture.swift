import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Collects the declarations of property wrappers while a class's schema is built.
///
/// Why: a property wrapper's arguments (`@Derived("items.@count")`) exist only as the
/// wrapper's initializer call, run each time an object is made. Storing them in every object
/// would cost memory per fault, so wrappers store one byte, and the schema builder makes one
/// prototype object with capturing switched on: each wrapper's initializer reports its
/// declaration, in declaration order, and only on the building thread. Outside a build, a
/// wrapper's initializer costs one relaxed atomic load (its initializer is inlined into the
/// model class: an out-of-line generic initializer looked up generic metadata for every
/// object made; decision 47).
@usableFromInline
enum SchemaCapture {
    private static let active = Atomic<Bool>(false)
    private struct State: @unchecked Sendable {
        /// The thread building a schema (none outside a build): `pthread_t` is an integer on
        /// Linux and a pointer on Darwin, so no value of it means "none" on both.
        var thread: pthread_t?
        var declarations: [PropertyDeclaration] = []
    }
    private static let state = Mutex(State())
    /// Serialises schema builds (a build may start another, for a relationship's target).
    private static let buildLock = NSRecursiveLock()

    /// Whether a schema build is capturing declarations (on some thread): the inlined part of a
    /// wrapper's initializer checks this before it calls its out-of-line declaration.
    @usableFromInline
    static var isCapturing: Bool { active.load(ordering: .relaxed) }

    /// Reports a declaration if a schema build on this thread is capturing.
    @inline(__always)
    static func record(_ declaration: @autoclosure () -> PropertyDeclaration) {
        guard active.load(ordering: .relaxed) else { return }
        let currentThread = pthread_self()
        state.withLock { locked in
            if let thread = locked.thread, pthread_equal(thread, currentThread) != 0 {
                locked.declarations.append(declaration())
            }
        }
    }

    /// Runs `body` while no other thread builds a schema (this thread may build several, nested).
    static func serialized<T>(_ body: () -> T) -> T {
        buildLock.lock()
        defer { buildLock.unlock() }
        return body()
    }

    /// Runs `make` with capturing on and returns what it made and the declarations reported.
    static func capture<T>(_ make: () -> T) -> (T, [PropertyDeclaration]) {
        buildLock.lock()
        defer { buildLock.unlock() }
        let saved = state.withLock { locked -> State in
            let old = locked
            locked.thread = pthread_self()
            locked.declarations = []
            return old
        }
        let wasActive = active.exchange(true, ordering: .sequentiallyConsistent)
        let made = make()
        let declarations = state.withLock { locked -> [PropertyDeclaration] in
            let captured = locked.declarations
            locked = saved
            return captured
        }
        active.store(wasActive, ordering: .sequentiallyConsistent)
        return (made, declarations)
    }
}
