/// The one error type every Strata API throws.
///
/// Switch on the case to decide what to do; each case documents when it is thrown and what
/// its associated values tell you. Descriptions never include user keys or values.
public enum StrataError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Thrown when the file is not a Strata store at all (wrong magic number), or is too short
    /// to hold a header.
    case notAStrataFile(path: String)
    /// Thrown when the file was written by a newer format version than this library reads.
    case unsupportedFormatVersion(found: UInt32, supported: UInt32)
    /// Thrown when bytes on disk contradict themselves: a checksum mismatch, an offset or length
    /// out of bounds, a tree that does not descend, a frame missing before the durable end.
    /// `offset` is the file offset where the problem was found (or `nil` when unknown).
    case corrupt(String, offset: UInt64?)
    /// Thrown when another process (or another `Store` in this process) holds the write lock.
    case locked(path: String)
    /// Thrown when the store file does not exist and the open may not create it (a read-only
    /// open, or ``StoreOptions/createIfMissing`` off). `path` is the path that was opened.
    case fileNotFound(path: String)
    /// Thrown when the operating system reports an I/O error. `errno` is the raw code.
    case ioFailure(operation: String, path: String, errno: Int32)
    /// Thrown when a write fails because the disk is full (`ENOSPC`). Nothing committed is lost.
    case diskFull(path: String)
    /// Thrown when a key is empty or longer than ``StoreLimits/maxKeyLength``.
    case keyTooLarge(length: Int, limit: Int)
    /// Thrown when a value is longer than ``StoreLimits/maxValueLength``.
    case valueTooLarge(length: Int, limit: Int)
    /// Thrown when a named tree does not exist.
    case treeNotFound(String)
    /// Thrown when a tree is created under a name that is already taken.
    case treeExists(String)
    /// Thrown by writes, checkpoints and compactions on a store opened with
    /// ``StoreOptions/readOnly``. Open the store read-write to change it.
    case readOnly(reason: String)
    /// Thrown by every operation of a ``Store`` after ``Store/close()`` (`close()` itself may be
    /// called again and does nothing). Open the store again to carry on.
    case closed(String)
    /// Thrown by every throwing method of a transaction, of a tree handle or cursor made from it,
    /// once that transaction ended: a ``WriteTransaction`` after its `write` closure returned
    /// (`.committed`), or after it threw, called ``WriteTransaction/rollback()``, failed or its
    /// commit failed (`.rolledBack`); a ``ReadTransaction`` after ``ReadTransaction/close()`` or
    /// the end of its `read` closure (`.closed`). Nothing was read or changed. Handles must not
    /// outlive their transaction: start a new one.
    case transactionEnded(TransactionEnd)
    /// Thrown when an operation of a write transaction failed after it had begun to change the
    /// transaction's trees (an I/O error or a damaged page while a delete merged pages, …):
    /// the transaction's in-memory state is no longer what its operations said. Every later
    /// operation of the transaction throws this again, and so does the commit (the `write` call)
    /// even if the closure caught the first error and returned: nothing of the transaction is
    /// committed. `cause` is the first error. Retry the whole transaction (after fixing the
    /// cause if it persists).
    indirect case transactionFailed(cause: StrataError)
    /// Thrown by every write, checkpoint and compaction after an `fsync` of the store file (or of
    /// its directory, after a compaction) failed: the kernel may have dropped the data that sync
    /// should have made durable, so the store cannot tell what is on disk and refuses to write
    /// more. A `full`-durability commit that was waiting for that sync throws this too: it may or
    /// may not be in the file. `close()` throws it as well (and still releases the lock).
    /// Reads of snapshots keep working. Reopen the store: recovery finds what reached the disk.
    /// Nothing else poisons a store: a failed write or a full disk fails only its operation
    /// (docs/decisions.md, decision 28).
    indirect case poisoned(cause: StrataError)
    /// Thrown by ``Cursor/next()``, ``Cursor/previous()`` and ``Cursor/copyValue()`` of a cursor
    /// of a write transaction when the cursor's tree was changed (put, delete, drop) since the
    /// cursor was positioned: its position may no longer exist. Reposition it with
    /// ``Cursor/first()``, ``Cursor/last()`` or `seek(_:)`.
    case cursorInvalidated
    /// Thrown by ``Store/write(_:)-81bh`` with ``StoreOptions/strictChecks`` when the full check run
    /// after the commit found problems. The commit *was* published (and made durable, with
    /// `full` durability): this is not a failed commit, it is a report that the store is
    /// damaged, for tests and debugging. `problems` are the check's findings.
    case strictCheckFailed(transactionID: UInt64, problems: [String])
    /// Thrown when an argument is invalid (a page size that is not a power of two, …).
    case invalidArgument(String)
    /// Thrown when a change would pass one of the format's fixed limits (FORMAT.md §3, §5): a
    /// transaction whose commit record would be longer than `limit` bytes (1 GiB; `what` is
    /// "commit record"; nothing was written: split the work into smaller transactions), or a
    /// store that has used all of its tree ids (`what` is "tree ids"; a compaction does not
    /// renumber them: copy the trees into a new store).
    case limitExceeded(what: String, limit: UInt64)

    // Record layer (StrataRecords) and object layer (Strata).

    /// Thrown when a model is built that cannot work: an unknown key path, a missing inverse, a
    /// derived type that does not fit its expression, a cycle among derived attributes.
    /// `property` is `nil` when the problem is the entity itself.
    case invalidModel(entity: String, property: String?, reason: String)
    /// Thrown when a store is opened with a model that differs from the one stored in it and no
    /// migration was asked for. Each difference is one line, naming entity and property.
    case modelMismatch(differences: [String])
    /// Thrown when a store holds a model of a version newer than the model it is opened with
    /// (`found` > `supported`): a program built before a migration met a store it migrated.
    /// Nothing was changed; open it with the newer program (or its model and migration plan).
    case unsupportedModelVersion(found: Int, supported: Int)
    /// Thrown when a value breaks a validation rule (min/max, length, pattern, a custom rule, a
    /// missing required value) or a property cannot be set (a derived attribute).
    case validation(entity: String, property: String?, reason: String)
    /// Thrown when a commit would break a uniqueness constraint (`properties` are the
    /// constrained properties) or a delete rule `deny` (`properties` names the relationship).
    case conflict(entity: String, properties: [String], reason: String)
    /// Thrown when an object identifier names no row (deleted, or never committed).
    case objectNotFound(entity: String, primaryKey: UInt64)
    /// Thrown when a predicate, a sort descriptor or a fetch cannot be parsed or used
    /// (an unknown key path, a transient attribute in a stored fetch, a type mismatch).
    case invalidFetch(String)
    /// Thrown when objects or contexts are used against their contract (Strata's object layer):
    /// an object of another context put into a relationship, a property of a deleted object
    /// set, a context used after its container closed, an object used after its context
    /// ended. `reason` names the object and what was done. Nothing was changed.
    case misuse(String)
    /// Thrown by a save for one object that cannot be saved as it is: a failed validation (a
    /// model rule or the object's own `validate…` method). `primaryKey` is `nil` for an object
    /// never saved; `property` is `nil` for a rule over the whole object.
    case invalidObject(entity: String, primaryKey: UInt64?, property: String?, reason: String)
    /// Thrown by a save whose context's merge policy is `error` when objects it changed were
    /// changed in the store since the context read them (optimistic locking): every conflict,
    /// with the snapshot the context read, the values it holds, and the store's values.
    case mergeConflicts([MergeConflictRecord])
    /// Thrown when a reader asks for the persistent history after a token whose successors were
    /// purged (or never recorded, while the store recorded no history): every transaction up to
    /// `purgedThrough` is gone. Read the data afresh and go on from the newest token.
    case historyPurged(after: UInt64, purgedThrough: UInt64)
    /// Thrown when one operation failed in several ways at once (a save that found many invalid
    /// objects): every failure, each a ``StrataError`` of its own.
    indirect case multipleErrors([StrataError])

    /// A one-line, human-readable explanation; never includes user keys or values.
    public var description: String {
        switch self {
        case .notAStrataFile(let path): return "not a Strata file: \(path)"
        case .unsupportedFormatVersion(let found, let supported):
            return "file format version \(found) is newer than the supported version \(supported)"
        case .corrupt(let what, let offset):
            if let offset { return "corrupt store at offset \(offset): \(what)" }
            return "corrupt store: \(what)"
        case .locked(let path): return "store is locked for writing by another process: \(path)"
        case .fileNotFound(let path): return "no such store file: \(path)"
        case .ioFailure(let op, let path, let code): return "I/O error during \(op) on \(path): errno \(code)"
        case .diskFull(let path): return "disk full while writing \(path)"
        case .keyTooLarge(let length, let limit): return "key length \(length) is outside 1...\(limit)"
        case .valueTooLarge(let length, let limit): return "value length \(length) exceeds the limit \(limit)"
        case .treeNotFound(let name): return "no tree named '\(name)'"
        case .treeExists(let name): return "a tree named '\(name)' already exists"
        case .readOnly(let reason): return "store is read-only: \(reason)"
        case .closed(let what): return "\(what) is closed"
        case .transactionEnded(let end): return "the transaction has ended (\(end)); start a new one"
        case .transactionFailed(let cause): return "the transaction failed part way and can only roll back: \(cause)"
        case .poisoned(let cause): return "the store refuses writes since a sync failed (\(cause)); reopen it"
        case .cursorInvalidated: return "the cursor's tree changed since it was positioned; reposition it"
        case .strictCheckFailed(let txid, let problems):
            let found = "\(problems.count) problem\(problems.count == 1 ? "" : "s")"
            return "strict check after commit \(txid) (which stands) found \(found): "
                + problems.joined(separator: "; ")
        case .invalidArgument(let what): return "invalid argument: \(what)"
        case .limitExceeded(let what, let limit): return "\(what) would pass the store's limit of \(limit)"
        case .invalidModel(let entity, let property, let reason):
            return "invalid model: \(entity)\(property.map { ".\($0)" } ?? ""): \(reason)"
        case .modelMismatch(let differences):
            let count = "\(differences.count) difference\(differences.count == 1 ? "" : "s")"
            return "the store's model differs from the given model (\(count)): \(differences.joined(separator: "; "))"
        case .unsupportedModelVersion(let found, let supported):
            return "the store holds version \(found) of its model, newer than the version \(supported) it was opened with"
        case .validation(let entity, let property, let reason):
            return "validation failed for \(entity)\(property.map { ".\($0)" } ?? ""): \(reason)"
        case .conflict(let entity, let properties, let reason):
            return "conflict on \(entity) (\(properties.joined(separator: ", "))): \(reason)"
        case .objectNotFound(let entity, let pk): return "no \(entity) with primary key \(pk)"
        case .invalidFetch(let what): return "invalid fetch: \(what)"
        case .misuse(let reason): return "misuse: \(reason)"
        case .invalidObject(let entity, let pk, let property, let reason):
            return "invalid \(entity)\(pk.map { "/\($0)" } ?? " (new)")\(property.map { ".\($0)" } ?? ""): \(reason)"
        case .mergeConflicts(let list):
            let count = "\(list.count) merge conflict\(list.count == 1 ? "" : "s")"
            return "\(count): \(list.map(\.description).joined(separator: "; "))"
        case .historyPurged(let after, let purged):
            return "the history after token \(after) is gone (purged through \(purged)): read the data afresh"
        case .multipleErrors(let errors):
            let count = "\(errors.count) error\(errors.count == 1 ? "" : "s")"
            return "\(count): \(errors.map(\.description).joined(separator: "; "))"
        }
    }
}
