import StrataRecords

extension ModelContext {
    /// The results of `descriptor`, now and after every save that affects them (see
    /// ``FetchResults``).
    public func results<T: ManagedObject>(of descriptor: FetchDescriptor<T>) -> FetchResults<T> {
        FetchResults(context: self, descriptor: descriptor)
    }

    /// `object`, now and after every save that changes it, until a save deletes it (see
    /// ``ObjectUpdates``). An object of no context yields nothing.
    public func updates<T: ManagedObject>(of object: T) -> ObjectUpdates<T> {
        ObjectUpdates(object: object)
    }

    /// The entities a fetch reads: its own, and those its predicate and sort key paths reach
    /// through relationships. With an in-memory filter or sort (closures over computed
    /// properties, whose dependencies it cannot see), every entity reachable through
    /// relationships counts.
    func entitiesRead<T: ManagedObject>(by descriptor: FetchDescriptor<T>) throws -> Set<String> {
        guard let root = container.binding(of: EntitySchema.of(T.self)) else {
            throw StrataError.misuse("\(T.self) is not one of the container's model classes")
        }
        var names: Set<String> = [root.name]
        if descriptor.refinesInMemory {
            var stack = [root]
            while let b = stack.popLast() {
                for t in b.targetEntity where t >= 0 && names.insert(container.bindings[t].name).inserted {
                    stack.append(container.bindings[t])
                }
            }
            return names
        }
        for path in StoreFetch(descriptor).storeKeyPaths {
            var b = root
            // Every relationship on the path is read, the last component's too (`items.@count`).
            for component in path {
                guard let slot = b.schema.slotByName[component], b.targetEntity[slot] >= 0 else { break }
                b = container.bindings[b.targetEntity[slot]]
                names.insert(b.name)
            }
        }
        return names
    }
}

extension SaveNotification {
    /// The entities of the rows the save inserted, changed, deleted or linked.
    var entitiesChanged: Set<String> {
        var names = Set<String>()
        for r in changes.inserted { names.insert(r.id.entity) }
        for r in changes.updated { names.insert(r.id.entity) }
        for r in changes.deleted { names.insert(r.id.entity) }
        for l in changes.links { names.insert(l.id.entity) }
        return names
    }
}
