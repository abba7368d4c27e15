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
    /// of `T`, so the array is reinterpreted whole, as the standard library's own array
    /// downcast does once it has checked the elements (a `compactMap` with `as?` cost ~1K
    /// instructions per fetched object in unspecialized code).
    @inlinable
    func cast<T: ManagedObject>(to type: T.Type) -> [T] {
        guard objectClass == T.self else { return objects.compactMap { $0 as? T } }
        return unsafeBitCast(objects, to: [T].self)
    }
}
