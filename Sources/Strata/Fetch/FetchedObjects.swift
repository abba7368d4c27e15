/// Objects a fetch made, all of one class: what ``ModelContext/fetch(_:)`` returns as `[T]`.
@usableFromInline
struct FetchedObjects {
    @usableFromInline let objects: [ManagedObject]
    /// The class of every object (the binding's class, found by the fetched class's schema).
    @usableFromInline let objectClass: ManagedObject.Type

    @usableFromInline
    init(objects: [ManagedObject], objectClass: ManagedObject.Type) {
        self.objects = objects
        self.objectClass = objectClass
    }

    /// The objects as `[T]`. Every object is of `objectClass`, which is `T` when the fetch was
    /// of `T`: each is then converted with `unsafeDowncast`, which the class check makes safe
    /// (and which checks it again in debug builds), instead of a dynamic `as?` cast per object.
    @inlinable
    func cast<T: ManagedObject>(to type: T.Type) -> [T] {
        guard objectClass == T.self else { return objects.compactMap { $0 as? T } }
        return objects.map { unsafeDowncast($0, to: T.self) }
    }
}
