import StrataRecords

extension Model {
    /// The model the model `classes` declare, of `version`: what ``ModelContainer`` opens its
    /// store with, for a ``MigrationStage`` between versions of the classes. Keep an older
    /// version's classes in a namespace of their own (`enum V1 { final class Note: ManagedObject
    /// {…} }`): a nested class is named by its own name, so `V1.Note` is entity `Note`.
    ///
    /// Throws `StrataError.invalidModel` for a class the model cannot be built from.
    public convenience init(for classes: [ManagedObject.Type], version: Int = 1) throws {
        let schemas = classes.map { EntitySchema.of($0) }
        try self.init(version: version, entities: try ModelBuilderFromClasses(schemas: schemas).entities())
    }
}
