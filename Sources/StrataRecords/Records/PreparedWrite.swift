import StrataStorage

/// The properties an insert or update sets, resolved against the model once: then each row is
/// written from an array of values in that order, without a dictionary of names or a boxed
/// value per property (a prepared fetch's counterpart for writes; the object layer's and a
/// bulk loader's path).
///
/// ```swift
/// let newItem = try store.prepareWrite("Item", properties: ["title", "amount", "list"])
/// try store.write { tx in
///     for (title, amount) in items {
///         try tx.insert(newItem, [.string(title), .decimal(amount), list.strataValue])
///     }
/// }
/// ```
///
/// A value for an attribute is converted exactly to the attribute's type, as with
/// ``RecordTransaction/insert(_:_:)-(String,_)``. A value for a to-one relationship is the target's
/// primary key (`.int`, which is what an ``ObjectID``'s `strataValue` is) or `.null`; the target
/// must exist. Properties not named keep their defaults (insert) or their values (update).
///
/// Immutable and `Sendable`: prepare once per store and share it. It runs only in write
/// transactions of the store it was prepared for.
public final class PreparedWrite: Sendable {
    /// The entity whose rows it writes.
    public let entity: String
    /// The properties it sets, in the order of the values.
    public let properties: [String]
    let model: Model
    let entityIndex: Int
    /// Each property's field in the row.
    let fields: [Int]
    /// Each property's target entity when it is a to-one relationship; -1 for an attribute.
    let targets: [Int]

    init(entity name: String, properties: [String], model: Model) throws {
        guard let e = model.entity(name) else {
            throw StrataError.invalidArgument("no entity '\(name)' in the model")
        }
        var fields: [Int] = []
        var targets: [Int] = []
        for p in properties {
            let i = try RecordTransaction.settableField(p, of: e)
            guard !fields.contains(i) else {
                throw StrataError.invalidArgument("\(e.name).\(p) is named twice in the prepared write")
            }
            fields.append(i)
            if case .toOne(let t) = e.fields[i].kind { targets.append(t) } else { targets.append(-1) }
        }
        self.entity = e.name
        self.properties = properties
        self.model = model
        self.entityIndex = e.index
        self.fields = fields
        self.targets = targets
    }
}

extension RecordStore {
    /// Resolves `properties` of `entity` once, for inserts and updates that give their values as
    /// an array in that order (see ``PreparedWrite``).
    ///
    /// - Throws: `invalidArgument` for an unknown entity or a property named twice;
    ///   `StrataError.validation` naming the property for one that cannot be set (unknown,
    ///   derived, transient, or a to-many relationship).
    public func prepareWrite(_ entity: String, properties: [String]) throws -> PreparedWrite {
        try PreparedWrite(entity: entity, properties: properties, model: model)
    }
}

extension RecordTransaction {
    /// Inserts an object of the prepared write's entity with `values` for its properties, in
    /// their order (``insert(_:_:)`` without the dictionary).
    ///
    /// - Throws: `invalidArgument` for a write prepared for another store or a count of values
    ///   other than the properties'; `StrataError.validation` naming entity and property for a
    ///   value its property cannot hold; `objectNotFound` for a to-one target that does not exist.
    @discardableResult
    public func insert(_ write: PreparedWrite, _ values: [StoredValue]) throws -> ObjectID {
        ObjectID(entity: write.entity, primaryKey: try insertRow(write, primaryKey: nil, values))
    }

    /// ``insert(_:primaryKey:_:)`` from an array of values: the object layer's inserts of
    /// objects whose keys it reserved.
    @discardableResult
    package func insert(_ write: PreparedWrite, primaryKey pk: UInt64, _ values: [StoredValue]) throws -> ObjectID {
        ObjectID(entity: write.entity, primaryKey: try insertRow(write, primaryKey: pk, values))
    }

    /// Inserts a row as ``insert(_:_:)-(PreparedWrite,_)`` does (`pk` nil), or under a reserved
    /// key as ``insert(_:primaryKey:_:)-(PreparedWrite,_,_)`` does, and returns its primary key:
    /// the object layer's save, which keeps keys, not identifiers (no entity name per row).
    package func insertRow(_ write: PreparedWrite, primaryKey pk: UInt64?, _ values: [StoredValue]) throws -> UInt64 {
        try checkOpen()
        let e = try entity(of: write, values)
        // A reserved key is checked before the values; a fresh one is allocated after them, so
        // a refused insert moves no counter.
        let reserved = try pk.map { try reservedRowKey(e, $0) }
        var r = newRow(e)
        try assign(write, values, to: &r, entity: e)
        let key = try reserved ?? RowKey(entity: e.index, pk: allocatePrimaryKey(e))
        try writeNewRow(key, r)
        return key.pk
    }

    /// Sets the prepared write's properties of the object `id` to `values`, in their order
    /// (``update(_:_:)`` without the dictionary).
    ///
    /// - Throws: what ``insert(_:_:)-(PreparedWrite,_)`` throws, `invalidArgument` for an `id`
    ///   of another entity, and `objectNotFound` for an object that does not exist.
    public func update(_ id: ObjectID, _ write: PreparedWrite, _ values: [StoredValue]) throws {
        try checkOpen()
        let e = try entity(of: write, values)
        let key = try rowKey(id)
        guard key.entity == e.index else {
            throw StrataError.invalidArgument("the prepared write sets \(e.name) objects, not \(id.entity)")
        }
        try rewriteRow(key) { r in try assign(write, values, to: &r, entity: e) }
    }

    /// ``update(_:_:_:)-(ObjectID,PreparedWrite,_)`` of the object of the prepared write's
    /// entity with primary key `pk`: the object layer's save, which holds keys, not identifiers
    /// (no entity name to look up per row).
    package func update(primaryKey pk: UInt64, _ write: PreparedWrite, _ values: [StoredValue]) throws {
        try checkOpen()
        let e = try entity(of: write, values)
        try rewriteRow(RowKey(entity: e.index, pk: pk)) { r in try assign(write, values, to: &r, entity: e) }
    }

    private func entity(of write: PreparedWrite, _ values: [StoredValue]) throws -> EntityDescription {
        guard write.model === model else {
            throw StrataError.invalidArgument("the prepared write of \(write.entity) was prepared for another store's model")
        }
        guard values.count == write.properties.count else {
            throw StrataError.invalidArgument("\(values.count) value\(values.count == 1 ? "" : "s") for the prepared write's "
                + "\(write.properties.count) propert\(write.properties.count == 1 ? "y" : "ies") (\(write.properties.joined(separator: ", ")))")
        }
        return model.entities[write.entityIndex]
    }

    private func assign(_ write: PreparedWrite, _ values: [StoredValue], to r: inout [StoredValue], entity e: EntityDescription) throws {
        for j in values.indices {
            let i = write.fields[j]
            let t = write.targets[j]
            let v = values[j]
            if t < 0 {
                r[i] = try Self.convert(v, to: e.fields[i], entity: e)
                continue
            }
            switch v {
            case .null:
                r[i] = .null
            case .int(let pk) where pk > 0:
                try requireRow(RowKey(entity: t, pk: UInt64(pk)))
                r[i] = v
            default:
                throw StrataError.validation(entity: e.name, property: e.fields[i].name,
                                             reason: "a to-one relationship takes the target's primary key (.int, an ObjectID's strataValue) or .null, got \(v)")
            }
        }
    }
}
