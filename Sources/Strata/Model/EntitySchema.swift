import Foundation
import Observation
import StrataRecords
import Synchronization

/// The schema of one model class, read from its property wrappers: the properties in
/// declaration order (a property's position is its *slot* in the object's values), their
/// declarations, and where each wrapper lies in an object (its offset finds its slot).
///
/// Built once per class, on first use (an object made, a container opened), by making one
/// prototype object while ``SchemaCapture`` collects the wrappers' declarations and a
/// `Mirror` of the prototype names them. A class the builder cannot read (entity inheritance,
/// more wrappers than declarations) keeps its ``buildError``: containers refuse it.
final class EntitySchema: @unchecked Sendable {
    enum Kind {
        case attribute(AttributeDeclaration)
        case toOne(RelationshipDeclaration)
        case toMany(RelationshipDeclaration)
        case derived(DerivedDeclaration)
    }

    /// A property's kind without its declaration (see ``slotKinds``).
    enum SlotKind: UInt8 {
        /// A stored attribute.
        case attribute
        /// A transient attribute (modelled, never stored).
        case transient
        case toOne
        case toMany
        case derived
    }

    struct Property {
        var name: String
        var kind: Kind
        var isRelationship: Bool {
            switch kind { case .toOne, .toMany: return true; default: return false }
        }
        var isToMany: Bool { if case .toMany = kind { return true } else { return false } }
        var isToOne: Bool { if case .toOne = kind { return true } else { return false } }
        var isDerived: Bool { if case .derived = kind { return true } else { return false } }
        var isTransient: Bool {
            if case .attribute(let attribute) = kind { return attribute.isTransient } else { return false }
        }
    }

    let objectClass: ManagedObject.Type
    /// Numbers the schemas of the process from 0: what a container finds a class's binding by
    /// (an array index: a `Dictionary` keyed by the class hashed with SipHash on every fault,
    /// property write and release; decision 48).
    let serial: Int
    private static let nextSerial = Atomic<Int>(0)
    /// The entity's name: the class's ``ManagedObject/entityName``.
    let name: String
    let properties: [Property]
    let slotByName: [String: Int]
    /// The values a new object starts with, by slot (defaults, else `null`).
    let initialValues: [StoredValue]
    /// The slots of transient attributes (modelled, never stored).
    let transientSlots: [Int]
    /// Where the class's wrappers lie in its objects (decision 72).
    let wrapperOffsets: WrapperOffsets
    /// Whether the class may run code of its own in ``ManagedObject/validateValue(_:forKey:)``:
    /// when not, a save neither bridges nor offers it each changed value (decision 73).
    let overridesValidateValue: Bool
    let buildError: StrataError?
    /// What each slot holds, one byte per slot, and the value bridge of each attribute (nil for
    /// relationships): a save's loops over objects and slots read these rather than copy a
    /// ``Property`` per slot (its declaration's closures, arrays and strings retained and
    /// released each time).
    let slotKinds: [SlotKind]
    let bridges: [ValueBridge?]
    /// Each slot's property name, for the same loops: `properties[slot].name` copied the
    /// whole ``Property`` out of the array first.
    let propertyNames: [String]
    /// Inverse names of relationships, by slot, once resolved (resolving a declared key path
    /// makes a probe prototype: not something to repeat per assignment).
    private let inverseNames = Mutex<[Int: String?]>([:])
    private init(objectClass: ManagedObject.Type, name: String, properties: [Property], error: StrataError?) {
        self.objectClass = objectClass
        self.serial = Self.nextSerial.add(1, ordering: .relaxed).oldValue
        self.name = name
        self.properties = properties
        var byName: [String: Int] = [:]
        for (i, property) in properties.enumerated() { byName[property.name] = i }
        self.slotByName = byName
        self.initialValues = properties.map { property in
            if case .attribute(let attribute) = property.kind { return attribute.defaultValue ?? .null }
            return .null
        }
        self.transientSlots = properties.indices.filter { properties[$0].isTransient }
        self.slotKinds = properties.map { property in
            switch property.kind {
            case .attribute(let attribute): return attribute.isTransient ? .transient : .attribute
            case .toOne: return .toOne
            case .toMany: return .toMany
            case .derived: return .derived
            }
        }
        self.bridges = properties.map { property in
            switch property.kind {
            case .attribute(let attribute): return attribute.bridge
            case .derived(let derived): return derived.bridge
            case .toOne, .toMany: return nil
            }
        }
        self.propertyNames = properties.map(\.name)
        self.observationKeys = properties.map { ManagedObject.observationKeyPath($0.name) }
        observationKeyRefs = UnretainedKeyPaths(observationKeys)
        let offsets = properties.isEmpty ? WrapperOffsets.none : WrapperOffsets(of: objectClass, slotByName: byName)
        self.wrapperOffsets = offsets
        self.overridesValidateValue = ValidateValueOverride.isOverridden(by: objectClass)
        // Accessors find their slots by these offsets: a class whose wrappers cannot all be
        // located would read placeholders and drop writes, so containers refuse it instead.
        if error == nil, offsets.count != properties.count {
            self.buildError = .invalidModel(entity: name, property: nil, reason: "\(offsets.count) of its "
                + "\(properties.count) property wrappers were found in its objects' layout (field reflection)")
        } else {
            self.buildError = error
        }
        Self.everyBuilt.withLock { $0.append(self) }
    }

    deinit {
        observationKeyRefs.free()
    }

    /// Every schema built in the process, so none is ever freed (the registry keeps those of
    /// classes; this keeps the stand-ins a failed build returns too): objects hold their
    /// schema as `Unmanaged` (decision 49), with no reference counting per property access.
    private static let everyBuilt = Mutex<[EntitySchema]>([])

    // MARK: Registry

    private static let registry = Mutex<[ObjectIdentifier: EntitySchema]>([:])
    /// Classes whose schema this thread is building (only touched inside
    /// ``SchemaCapture/serialized(_:)``), and whether their `init()` asked for it meanwhile.
    private static let building = Mutex<[ObjectIdentifier: Bool]>([:])

    /// The schema of `type`, built on first use (once: builds are serialised).
    static func of(_ type: ManagedObject.Type) -> EntitySchema {
        let id = ObjectIdentifier(type)
        if let schema = registry.withLock({ $0[id] }) { return schema }
        return SchemaCapture.serialized {
            if let schema = registry.withLock({ $0[id] }) { return schema }
            // The prototype's init() reads or sets a persistent property: building again would
            // recurse without end. It gets a schema without properties, and the build fails.
            let reentered = building.withLock { inProgress -> Bool in
                guard inProgress[id] != nil else { return false }
                inProgress[id] = true
                return true
            }
            if reentered {
                return EntitySchema(objectClass: type, name: type.entityName, properties: [], error: nil)
            }
            building.withLock { $0[id] = false }
            var built = build(type)
            if building.withLock({ $0.removeValue(forKey: id) }) == true {
                built = EntitySchema(objectClass: type, name: built.name, properties: [], error: .invalidModel(
                    entity: built.name, property: nil,
                    reason: "init() reads or sets a persistent property "
                        + "(the schema is read from an object made with init(): "
                        + "set initial values in a convenience initializer or awakeFromInsert())"))
            }
            registry.withLock { $0[id] = built }
            return built
        }
    }

    private static func build(_ type: ManagedObject.Type) -> EntitySchema {
        let (prototype, declarations) = SchemaCapture.capture { type.init() }
        let name = type.entityName
        var names: [String] = []
        var inheritedWrappers = false
        let mirror = Mirror(reflecting: prototype)
        for child in mirror.children where child.value is any ManagedPropertyWrapper {
            guard let label = child.label, label.hasPrefix("_") else { continue }
            names.append(String(label.dropFirst()))
        }
        var superMirror = mirror.superclassMirror
        while let ancestor = superMirror, ancestor.subjectType != ManagedObject.self {
            if ancestor.children.contains(where: { $0.value is any ManagedPropertyWrapper }) {
                inheritedWrappers = true
            }
            superMirror = ancestor.superclassMirror
        }
        var error: StrataError?
        if inheritedWrappers {
            error = .invalidModel(entity: name, property: nil,
                                  reason: "declares persistent properties in a superclass other than ManagedObject: "
                                      + "entity inheritance is not supported")
        } else if names.count != declarations.count {
            error = .invalidModel(entity: name, property: nil,
                                  reason: "\(names.count) property wrappers but \(declarations.count) declarations "
                                      + "were seen (a wrapper assigned in an initializer?)")
        }
        var properties: [Property] = []
        if error == nil {
            for (propertyName, declaration) in zip(names, declarations) {
                switch declaration {
                case .attribute(let attribute):
                    properties.append(Property(name: propertyName, kind: .attribute(attribute)))
                case .derived(let derived):
                    properties.append(Property(name: propertyName, kind: .derived(derived)))
                case .relationship(let relationship):
                    let kind: Kind = relationship.isToMany ? .toMany(relationship) : .toOne(relationship)
                    properties.append(Property(name: propertyName, kind: kind))
                }
            }
        }
        return EntitySchema(objectClass: type, name: name, properties: properties, error: error)
    }

    // MARK: Relationships

    /// The relationship declaration in `slot`, if the property there is a relationship.
    func relationship(at slot: Int) -> RelationshipDeclaration? {
        switch properties[slot].kind {
        case .toOne(let relationship), .toMany(let relationship): return relationship
        default: return nil
        }
    }

    /// The inverse the relationship in `slot` declares with `inverse:`, resolved once.
    func declaredInverse(ofSlot slot: Int) -> String? {
        if let known = inverseNames.withLock({ $0[slot] }) { return known }
        let name = relationship(at: slot)?.inverse?()
        inverseNames.withLock { $0[slot] = name }
        return name
    }

    /// The properties of this class that are relationships reaching `type`.
    func relationships(reaching type: ManagedObject.Type) -> [Property] {
        properties.indices.filter { relationship(at: $0)?.target == type }.map { properties[$0] }
    }

    /// The inverse of the relationship in `slot` by the model builder's rules: declared on
    /// this side, declared on the other side naming this one, or the one relationship of the
    /// target that reaches back. Nil when none of them answers.
    func inverseName(ofSlot slot: Int) -> String? {
        guard let relationship = relationship(at: slot) else { return nil }
        if let declared = declaredInverse(ofSlot: slot) { return declared }
        let target = EntitySchema.of(relationship.target)
        let name = properties[slot].name
        for targetSlot in target.properties.indices
        where target.relationship(at: targetSlot)?.target == objectClass {
            if target.declaredInverse(ofSlot: targetSlot) == name { return target.properties[targetSlot].name }
        }
        let back = target.relationships(reaching: objectClass)
        return back.count == 1 ? back[0].name : nil
    }

    // MARK: Computed properties and dependencies

    /// Computed properties registered so far (by their first evaluation), by name.
    private let computedByName = Mutex<[String: ComputedInfo]>([:])
    private let computedProblems = Mutex<[String: String]>([:])
    /// The properties of other classes (and this one) that depend on a property of this
    /// class, by the name of the property they depend on.
    private let dependentsByName = Mutex<[String: [Dependent]]>([:])
    /// Whether anything depends on a property of this class: when not, a change notifies no
    /// computed property and costs no lookup.
    let hasDependents = Atomic<Bool>(false)
    /// What Swift Observation tracks for each stored property, by slot.
    let observationKeys: [KeyPath<ManagedObject, Int>]
    /// `observationKeys` unretained, by slot (kept alive by the array), for reads that borrow
    /// them (``ManagedObject/_trackAccess(slot:)``). Freed with the schema, which no object
    /// outlives (schemas are never freed: ``everyBuilt``).
    let observationKeyRefs: UnretainedKeyPaths
    /// Swift Observation's registrar for the objects of the class (decision 34).
    let registrar = ObservationRegistrar()

    func computed(named name: String) -> ComputedInfo? { computedByName.withLock { $0[name] } }

    /// What depends on the property `name` of this class.
    func dependents(of name: String) -> [Dependent] {
        guard hasDependents.load(ordering: .acquiring) else { return [] }
        return dependentsByName.withLock { $0[name] ?? [] }
    }

    /// Registers the computed property `name` depending on `paths`, and returns it with a
    /// description of what is wrong with a path (one that goes on past an attribute, or names
    /// nothing), if anything is. A path's last name may be a computed property not read yet.
    func registerComputed(_ name: String, isCached: Bool, paths: [[String]]) -> (ComputedInfo, String?) {
        let info = ComputedInfo(name: name, isCached: isCached, paths: paths)
        let winner = computedByName.withLock { table -> ComputedInfo? in
            if let known = table[name] { return known }
            table[name] = info
            return nil
        }
        if let winner { return (winner, nil) }
        var problems: [String] = []
        for path in paths {
            guard !path.isEmpty else { problems.append("a dependency key path reads no property"); continue }
            var schema = self
            var hops: [Dependent.Hop] = []
            for (i, component) in path.enumerated() {
                schema.addDependent(Dependent(owner: self, key: name, hops: hops), on: component)
                if i == path.count - 1 { break }
                guard let slot = schema.slotByName[component], let relationship = schema.relationship(at: slot) else {
                    problems.append("dependency '\(path.joined(separator: "."))': "
                                    + "'\(component)' is not a relationship of \(schema.name)")
                    break
                }
                hops.append(Dependent.Hop(schema: schema, relationship: component))
                schema = EntitySchema.of(relationship.target)
            }
        }
        let problem = problems.isEmpty ? nil : problems.joined(separator: "; ")
        if let problem { computedProblems.withLock { $0[name] = problem } }
        return (info, problem)
    }

    /// What is wrong with the dependencies of the computed property `name`, if it is registered
    /// and anything is (a container opened later refuses the class again).
    func computedProblem(_ name: String) -> String? { computedProblems.withLock { $0[name] } }

    /// Registers the computed properties the class lists in
    /// ``ManagedObject/computedProperties``, by reading each on a probe (its getter registers
    /// it, with its dependencies, as a first evaluation would). Returns what is wrong: a key
    /// path of another class, one that reaches no computed property, or dependencies that
    /// name nothing.
    func registerDeclaredComputed() -> StrataError? {
        for keyPath in objectClass.computedProperties {
            let recorder = ProbeRecorder()
            let probe = objectClass.init()
            probe._flags.insert(.probe)
            probe.extras.probe = recorder
            // A key path of another root reads nothing (the subscript gives nil), so it fails
            // the check below like any other key path that is not a computed property.
            _ = (probe as Any)[keyPath: keyPath]
            if let problem = recorder.problems.first {
                return .invalidModel(entity: name, property: recorder.names.first, reason: problem)
            }
            guard recorder.names.count == 1, computed(named: recorder.names[0]) != nil else {
                return .invalidModel(entity: name, property: nil, reason: "computedProperties lists \(keyPath), "
                    + "which is not a computed property of \(objectClass) "
                    + "(its getter must call computed(dependsOn:) or cached(dependsOn:))")
            }
        }
        return nil
    }

    private func addDependent(_ dependent: Dependent, on name: String) {
        dependentsByName.withLock { $0[name, default: []].append(dependent) }
        hasDependents.store(true, ordering: .releasing)
    }

    /// The key path Swift Observation tracks for the property (stored or computed) `name`.
    func observationKey(of name: String) -> KeyPath<ManagedObject, Int>? {
        if let slot = slotByName[name] { return observationKeys[slot] }
        return computed(named: name)?.observationKey
    }
}
