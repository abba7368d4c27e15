/// A stored (or, with `transient: true`, a modelled but never stored) attribute.
public struct AttributeDescription: Sendable {
    /// The attribute's name: letters, digits and `_`, not starting with `_` or a digit.
    public var name: String
    /// The type of the attribute's values.
    public var type: AttributeType
    /// Whether the value may be `null`; a required attribute left `null` fails the commit with
    /// `StrataError.validation`.
    public var isOptional: Bool
    /// The value a new object starts with; `nil` means it starts `null`.
    public var defaultValue: StoredValue?
    /// Whether the attribute is only modelled: never stored, and not usable in a fetch.
    public var isTransient: Bool
    /// Rules every non-`null` value must satisfy at commit (`StrataError.validation`).
    public var validation: [ValidationRule]
    /// The attribute's name in the previous model version, for a lightweight migration.
    public var renamingIdentifier: String?
    /// Whether a deleted object's value stays in the persistent history (its
    /// ``HistoryChange/Kind/delete`` change lists it), as Core Data's "preserve after deletion":
    /// what a consumer needs to find the object in its own data (a server id, a name).
    public var isPreservedAfterDeletion: Bool
    /// The default was given as an ``ObjectID``, which is no attribute value (the model refuses it).
    var defaultIsObjectID = false

    /// An attribute named `name` of `type`. `defaultValue` must convert to `type` exactly, as
    /// inserted values must (checked when the model is built: `StrataError.invalidModel`);
    /// `renamedFrom` is its name in the previous model version; `preservedAfterDeletion` keeps
    /// the value in the history of the object's deletion.
    public init(_ name: String, _ type: AttributeType, optional: Bool = false,
                default defaultValue: ValueConvertible? = nil, transient: Bool = false,
                validation: [ValidationRule] = [], renamedFrom: String? = nil,
                preservedAfterDeletion: Bool = false) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue?.strataValue
        self.defaultIsObjectID = defaultValue is ObjectID
        self.isTransient = transient
        self.validation = validation
        self.renamingIdentifier = renamedFrom
        self.isPreservedAfterDeletion = preservedAfterDeletion
    }
}
