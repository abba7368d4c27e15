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
            while let binding = stack.popLast() {
                for targetIndex in binding.targetEntity
                where targetIndex >= 0 && names.insert(container.bindings[targetIndex].name).inserted {
                    stack.append(container.bindings[targetIndex])
                }
            }
            return names
        }
        for path in StoreFetch(descriptor).storeKeyPaths {
            var binding = root
            // Every relationship on the path is read, the last component's too (`items.@count`).
            for component in path {
                guard let slot = binding.schema.slotByName[component], binding.targetEntity[slot] >= 0 else { break }
                binding = container.bindings[binding.targetEntity[slot]]
                names.insert(binding.name)
            }
        }
        return names
    }
}

extension SaveNotification {
    /// The entities of the rows the save inserted, changed, deleted or linked.
    var entitiesChanged: Set<String> {
        var names = Set<String>()
        for row in changes.inserted { names.insert(row.id.entity) }
        for row in changes.updated { names.insert(row.id.entity) }
        for row in changes.deleted { names.insert(row.id.entity) }
        for link in changes.links { names.insert(link.id.entity) }
        return names
    }
}
