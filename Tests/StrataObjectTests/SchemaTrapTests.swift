import Foundation
import Strata
import Testing

/// Sets a persistent property in the initializer contexts make faults with.
final class SetsInInit: ManagedObject {
    @Attribute var title: String
    required init() {
        super.init()
        title = "from init"
    }
}

/// Reads a persistent property in its initializer.
final class ReadsInInit: ManagedObject {
    @Attribute var count: Int64
    var seen: Int64 = -1
    required init() {
        super.init()
        seen = count
    }
}

/// What a model class's own code can do while its schema is built.
@Suite struct SchemaTrapTests {
    /// The schema is read from a prototype made with `init()`; a property access in `init()`
    /// needed the schema being built, which built it again, without end (a stack overflow).
    /// Now the class is an invalid model, named with the reason, and its objects do not trap.
    @Test func aPropertyAccessInInitIsAnInvalidModelNotARecursion() throws {
        for type in [SetsInInit.self, ReadsInInit.self] as [ManagedObject.Type] {
            do {
                try withContainer(for: [type]) { _ in }
                Issue.record("\(type): accepted")
            } catch StrataError.invalidModel(let entity, _, let reason) {
                #expect(entity == type.entityName)
                #expect(reason.contains("init()"), "\(reason)")
            } catch {
                Issue.record("\(type): \(error), not invalidModel")
            }
        }
        let detached = SetsInInit()
        #expect(detached.entityName == "SetsInInit")
        #expect(ReadsInInit().seen == 0)
    }
}
