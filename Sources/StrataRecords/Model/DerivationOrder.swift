import StrataStorage

/// Orders derived attributes so that each is computed after every derived attribute it
/// reads (`lineTotal` before `items.lineTotal.@sum`), and rejects cycles.
struct DerivationOrder {
    let entities: [EntityDescription]

    /// The derived attributes `d` reads directly.
    func dependencies(of ref: Model.DerivedReference) -> [Model.DerivedReference] {
        let e = entities[ref.entity]
        let d = e.derivedAttributes[ref.derived]
        var out: [Model.DerivedReference] = []
        func derivedRef(_ entity: Int, _ name: String) -> Model.DerivedReference? {
            entities[entity].derivedAttributes.firstIndex { $0.name == name }.map { Model.DerivedReference(entity: entity, derived: $0) }
        }
        for path in d.parsed.paths {
            var ei = ref.entity
            for hop in path.dropLast() { ei = entities[ei].relationship(hop)!.targetIndex }
            if let r = derivedRef(ei, path.last!) { out.append(r) }
        }
        if case .aggregate(_, let rel, let attr?) = d.parsed, let r = e.relationship(rel), let x = derivedRef(r.targetIndex, attr) {
            out.append(x)
        }
        return out
    }

    func sorted() throws -> [Model.DerivedReference] {
        var order: [Model.DerivedReference] = []
        var state: [Model.DerivedReference: Bool] = [:]  // false: in progress, true: done
        func visit(_ r: Model.DerivedReference, _ stack: [Model.DerivedReference]) throws {
            if state[r] == true { return }
            if state[r] == false {
                let cycle = (stack.drop { $0 != r } + [r]).map { "\(entities[$0.entity].name).\(entities[$0.entity].derivedAttributes[$0.derived].name)" }
                throw StrataError.invalidModel(entity: entities[r.entity].name, property: entities[r.entity].derivedAttributes[r.derived].name,
                                               reason: "derived attributes form a cycle: \(cycle.joined(separator: " → "))")
            }
            state[r] = false
            for dep in dependencies(of: r) { try visit(dep, stack + [r]) }
            state[r] = true
            order.append(r)
        }
        for e in entities {
            for i in e.derivedAttributes.indices { try visit(Model.DerivedReference(entity: e.index, derived: i), []) }
        }
        return order
    }
}
