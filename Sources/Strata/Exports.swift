@_exported import StrataRecords
import StrataStorage

// The record layer comes with `import Strata`: its predicate builder's operators
// (`PropertyPath(\Item.amount) > 50`) are members of its types and are found only when its
// module is visible. Its names are its own (decision 51): the model builder's
// `AttributeDescription`, `RelationshipDescription` and `DerivedAttributeDescription`, the value
// type `StoredValue`, so nothing it exports shadows the object layer's `Attribute`,
// `Relationship` and `Derived` wrappers, and one file can use both layers. The aliases below
// name the lower layers' types an object-layer user meets, so each resolves to one declaration.

/// Errors of every layer (`StrataStorage.StrataError`).
public typealias StrataError = StrataStorage.StrataError
/// One attribute value as the store keeps it (`StrataRecords.StoredValue`).
public typealias StoredValue = StrataRecords.StoredValue
/// The type of an attribute (`StrataRecords.AttributeType`).
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
/// The versions of a model and the stages between them (`MigrationPolicy.plan`).
public typealias MigrationPlan = StrataRecords.MigrationPlan
/// One stage of a migration plan: lightweight, or with code of its own.
public typealias MigrationStage = StrataRecords.MigrationStage
/// The objects of a custom stage's source model, as they were.
public typealias MigrationSnapshot = StrataRecords.MigrationSnapshot
/// Where a migration stands (`MigrationPlan.progress`).
public typealias MigrationProgress = StrataRecords.MigrationProgress
/// A word index over string properties (`ManagedObject.fullTextIndexes` at this layer).
public typealias FullTextIndex = StrataRecords.FullTextIndex
/// A search of a word index: the query, every word or any, a limit.
public typealias TextSearch = StrataRecords.TextSearch
/// Options of the page file (durability, cache size, read-only, …).
public typealias StoreOptions = StrataStorage.StoreOptions
/// Whether other processes may write the store too (`StoreOptions.sharing`).
public typealias ProcessSharing = StrataStorage.ProcessSharing
/// When a commit is durable (`StoreOptions.durability`).
public typealias Durability = StrataStorage.Durability
/// One conflict of a save refused under ``MergePolicy/error`` (`StrataError.mergeConflicts`).
public typealias MergeConflictRecord = StrataStorage.MergeConflictRecord
/// A key path of the typed predicate builder: `PropertyPath(\Item.amount) > 50`.
public typealias PropertyPath = StrataRecords.PropertyPath
