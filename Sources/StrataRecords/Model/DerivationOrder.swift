import StrataStorage

/// Orders derived attributes so that each is computed after every derived attribute it
/// reads (`lineTotal` before `items.lineTotal.@sum`), and rejects cycles.
struct DerivationOrder {
    let entities: [EntityDescription]

    /// The derived attributes that the one `ref` names reads directly.
    func dependencies(of ref: Model.DerivedReference) -> [Model.DerivedReference] {
        let entity = entities[ref.entity]
        let derived = entity.derivedAttributes[ref.derived]
        var out: [Model.DerivedReference] = []
        func derivedRef(_ entityIndex: Int, _ name: String) -> Model.DerivedReference? {
            entities[entityIndex].derivedAttributes.firstIndex { $0.name == name }
                .map { Model.DerivedReference(entity: entityIndex, derived: $0) }
        }
        for path in derived.parsed.paths {
            var entityIndex = ref.entity
            for hop in path.dropLast() { entityIndex = entities[entityIndex].relationship(hop)!.targetIndex }
            if let reference = derivedRef(entityIndex, path.last!) { out.append(reference) }
        }
        if case .aggregate(_, let rel, let attr?) = derived.parsed, let relationship = entity.relationship(rel),
           let target = derivedRef(relationship.targetIndex, attr) {
            out.append(target)
        }
        return out
    }

    func sorted() throws -> [Model.DerivedReference] {
        var order: [Model.DerivedReference] = []
        var state: [Model.DerivedReference: Bool] = [:]  // false: in progress, true: done
        func visit(_ reference: Model.DerivedReference, _ stack: [Model.DerivedReference]) throws {
            if state[reference] == true { return }
            if state[reference] == false {
                let cycle = (stack.drop { $0 != reference } + [reference]).map {
                    "\(entities[$0.entity].name).\(entities[$0.entity].derivedAttributes[$0.derived].name)"
                }
                let entity = entities[reference.entity]
                let names = cycle.joined(separator: " → ")
                throw StrataError.invalidModel(entity: entity.name,
                                               property: entity.derivedAttributes[reference.derived].name,
                                               reason: "derived attributes form a cycle: \(names)")
            }
            state[reference] = false
            for dep in dependencies(of: reference) { try visit(dep, stack + [reference]) }
            state[reference] = true
            order.append(reference)
        }
        for entity in entities {
            for i in entity.derivedAttributes.indices {
                try visit(Model.DerivedReference(entity: entity.index, derived: i), [])
            }
        }
        return order
    }
}
