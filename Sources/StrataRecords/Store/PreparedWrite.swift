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
        guard let entity = model.entity(name) else {
            throw StrataError.invalidArgument("no entity '\(name)' in the model")
        }
        var fields: [Int] = []
        var targets: [Int] = []
        for property in properties {
            let i = try RecordTransaction.settableField(property, of: entity)
            guard !fields.contains(i) else {
                throw StrataError.invalidArgument("\(entity.name).\(property) is named twice in the prepared write")
            }
            fields.append(i)
            if case .toOne(let target) = entity.fields[i].kind { targets.append(target) } else { targets.append(-1) }
        }
        self.entity = entity.name
        self.properties = properties
        self.model = model
        self.entityIndex = entity.index
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
        let entityDescription = try entity(of: write, values)
        // A reserved key is checked before the values; a fresh one is allocated after them, so
        // a refused insert moves no counter.
        let reserved = try pk.map { try reservedRowKey(entityDescription, $0) }
        var row = newRow(entityDescription)
        try assign(write, values, to: &row, entity: entityDescription)
        let key = try reserved ?? RowKey(entity: entityDescription.index, pk: allocatePrimaryKey(entityDescription))
        try writeNewRow(key, row)
        return key.pk
    }

    /// Sets the prepared write's properties of the object `id` to `values`, in their order
    /// (``update(_:_:)`` without the dictionary).
    ///
    /// - Throws: what ``insert(_:_:)-(PreparedWrite,_)`` throws, `invalidArgument` for an `id`
    ///   of another entity, and `objectNotFound` for an object that does not exist.
    public func update(_ id: ObjectID, _ write: PreparedWrite, _ values: [StoredValue]) throws {
        try checkOpen()
        let entityDescription = try entity(of: write, values)
        let key = try rowKey(id)
        guard key.entity == entityDescription.index else {
            throw StrataError.invalidArgument(
                "the prepared write sets \(entityDescription.name) objects, not \(id.entity)")
        }
        try rewriteRow(key) { row in try assign(write, values, to: &row, entity: entityDescription) }
    }

    /// ``update(_:_:_:)-(ObjectID,PreparedWrite,_)`` of the object of the prepared write's
    /// entity with primary key `pk`: the object layer's save, which holds keys, not identifiers
    /// (no entity name to look up per row).
    package func update(primaryKey pk: UInt64, _ write: PreparedWrite, _ values: [StoredValue]) throws {
        try checkOpen()
        let entityDescription = try entity(of: write, values)
        try rewriteRow(RowKey(entity: entityDescription.index, pk: pk)) { row in
            try assign(write, values, to: &row, entity: entityDescription)
        }
    }

    private func entity(of write: PreparedWrite, _ values: [StoredValue]) throws -> EntityDescription {
        guard write.model === model else {
            throw StrataError.invalidArgument(
                "the prepared write of \(write.entity) was prepared for another store's model")
        }
        guard values.count == write.properties.count else {
            let valueCount = "\(values.count) value\(values.count == 1 ? "" : "s")"
            let propertyCount = "\(write.properties.count) propert\(write.properties.count == 1 ? "y" : "ies")"
            throw StrataError.invalidArgument("\(valueCount) for the prepared write's \(propertyCount) "
                                              + "(\(write.properties.joined(separator: ", ")))")
        }
        return model.entities[write.entityIndex]
    }

    private func assign(_ write: PreparedWrite, _ values: [StoredValue], to row: inout [StoredValue],
                        entity: EntityDescription) throws {
        for j in values.indices {
            let i = write.fields[j]
            let target = write.targets[j]
            let value = values[j]
            if target < 0 {
                row[i] = try Self.convert(value, to: entity.fields[i], entity: entity)
                continue
            }
            switch value {
            case .null:
                row[i] = .null
            case .int(let pk) where pk > 0:
                try requireRow(RowKey(entity: target, pk: UInt64(pk)))
                row[i] = value
            default:
                throw StrataError.validation(entity: entity.name, property: entity.fields[i].name,
                                             reason: "a to-one relationship takes the target's primary key "
                                                 + "(.int, an ObjectID's strataValue) or .null, got \(value)")
            }
        }
    }
}
