import Foundation
@testable import Strata
import Testing

/// Decision 73: a save offers changed values to `validateValue(_:forKey:)` only for classes
/// that override it, told by their metadata's method table. A wrong "not overridden" would
/// skip a user's validation silently, so every way of overriding is checked, and a save
/// through each.
@Suite struct ValidateValueOverrideTests {
    class Plain: ManagedObject {
        @Attribute var code: String
        override func validateForInsert() throws {}
        override func willSave() {}
    }

    /// Base classes hold no persistent properties (entity inheritance is not supported).
    class PlainBase: ManagedObject {
        override func didSave() {}
    }

    class ValidatingBase: ManagedObject {
        override func validateValue(_ value: Any?, forKey key: String) throws {
            if key == "code", let text = value as? String, text.count != 3 {
                throw StrataError.invalidObject(entity: "Validating", primaryKey: nil, property: key,
                                                reason: "three letters")
            }
            try super.validateValue(value, forKey: key)
        }
    }

    final class Validating: ValidatingBase {
        @Attribute var code: String
    }

    /// Inherits its override from the base, declaring none of its own.
    final class ValidatingChild: ValidatingBase {
        @Attribute var code: String
        @Attribute var extra: Int64?
    }

    /// Overrides below a base that did not.
    final class LateValidating: PlainBase {
        @Attribute var code: String
        override func validateValue(_ value: Any?, forKey key: String) throws {
            if key == "code", (value as? String) == "BAD" {
                throw StrataError.invalidObject(entity: "LateValidating", primaryKey: nil, property: key,
                                                reason: "refused")
            }
        }
    }

    @Test func theMethodTableEntryIsFound() {
        // This platform's layout is the one the reads assume: without it every class counts
        // as overriding (correct, only slower), which this test would hide.
        #if !canImport(ObjectiveC)
        #expect(ValidateValueOverride.entryIndex != nil)
        #endif
    }

    @Test func overridesAreToldFromInheritance() {
        #if !canImport(ObjectiveC)
        #expect(!ValidateValueOverride.isOverridden(by: ManagedObject.self))
        #expect(!ValidateValueOverride.isOverridden(by: Plain.self))
        #expect(!ValidateValueOverride.isOverridden(by: PlainBase.self))
        #expect(!ValidateValueOverride.isOverridden(by: Patchwork.self))
        #endif
        #expect(ValidateValueOverride.isOverridden(by: ValidatingBase.self))
        #expect(ValidateValueOverride.isOverridden(by: Validating.self))
        #expect(ValidateValueOverride.isOverridden(by: ValidatingChild.self))
        #expect(ValidateValueOverride.isOverridden(by: LateValidating.self))
    }

    @Test func savesStillValidateThroughEveryKindOfOverride() throws {
        try withContainer(for: [Validating.self, ValidatingChild.self, LateValidating.self]) { container in
            let context = ModelContext(container)
            let inherited = ValidatingChild()
            inherited.code = "TOOLONG"
            context.insert(inherited)
            #expect(throws: StrataError.self) { try context.save() }
            inherited.code = "ABC"
            try context.save()

            let late = LateValidating()
            late.code = "BAD"
            context.insert(late)
            #expect(throws: StrataError.self) { try context.save() }
            late.code = "OK!"
            try context.save()

            // An update is offered too.
            let direct = Validating()
            direct.code = "XYZ"
            context.insert(direct)
            try context.save()
            direct.code = "WXYZ"
            #expect(throws: StrataError.self) { try context.save() }
        }
    }
}
