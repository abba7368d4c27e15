import StrataRecords
import StrataStorage

// The object layer declares its own `Attribute`, `Relationship` and `Derived` (property
// wrappers), which the record layer's model DSL also names; so the record layer is not
// re-exported wholesale. These are the record-layer types an object-layer user meets.

/// Errors of every layer (see ``StrataStorage/StrataError``).
public typealias StrataError = StrataStorage.StrataError
/// One attribute value as the store keeps it (``StrataRecords/Value``).
public typealias Value = StrataRecords.Value
/// The type of an attribute (``StrataRecords/AttributeType``).
public typealias AttributeType = StrataRecords.AttributeType
/// What deleting an object does to the objects a relationship reaches.
public typealias DeleteRule = StrataRecords.DeleteRule
/// A rule every value of an attribute must satisfy at save.
public typealias ValidationRule = StrataRecords.ValidationRule
/// A fetch predicate in the record layer's format language.
public typealias FetchPredicate = StrataRecords.FetchPredicate
/// A sort key path and direction.
public typealias FetchSortDescriptor = StrataRecords.FetchSortDescriptor
/// Whether and how a store with an older model is migrated when opened.
public typealias MigrationPolicy = StrataRecords.MigrationPolicy
/// Options of the page file (durability, cache size, read-only, …).
public typealias StoreOptions = StrataStorage.StoreOptions
