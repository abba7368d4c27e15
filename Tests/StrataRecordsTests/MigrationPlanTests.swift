import Foundation
import Synchronization
import Testing
import StrataStorage
@testable import StrataRecords

/// Versioned models and migration plans: stages in order from the stored version, custom code
/// reading the old objects and writing the new ones, all or nothing, newer stores refused.
@Suite struct MigrationPlanTests {
    /// People with an address in their own fields and an age as text (version 2: with an email).
    static func person(email: Bool) -> Entity {
        Entity("Person") {
            AttributeDescription("name", .string)
            AttributeDescription("age", .string, optional: true)
            AttributeDescription("street", .string, default: "")
            AttributeDescription("city", .string, default: "")
            if email { AttributeDescription("email", .string, default: "") }
            RelationshipDescription("friends", toMany: "Person", inverse: "friendOf")
            RelationshipDescription("friendOf", toMany: "Person", inverse: "friends")
        }
    }

    static func v1() throws -> Model { try Model(version: 1, entities: [person(email: false)]) }

    /// An email added (lightweight).
    static func v2() throws -> Model { try Model(version: 2, entities: [person(email: true)]) }

    /// The age an integer, the address an entity of its own shared by the people living there
    /// (custom), counted and named in canonical form by derived attributes.
    static func v3() throws -> Model {
        try Model(version: 3) {
            Entity("Person") {
                AttributeDescription("name", .string)
                AttributeDescription("age", .int64)
                AttributeDescription("email", .string, default: "")
                RelationshipDescription("address", toOne: "Address", inverse: "residents", optional: true)
                RelationshipDescription("friends", toMany: "Person", inverse: "friendOf")
                RelationshipDescription("friendOf", toMany: "Person", inverse: "friends")
                DerivedAttributeDescription("cityName", .string, "address.city", optional: true)
                Unique("email")
            }
            Entity("Address") {
                AttributeDescription("street", .string)
                AttributeDescription("city", .string)
                RelationshipDescription("residents", toMany: "Person", inverse: "address")
                DerivedAttributeDescription("residentCount", .int64, "residents.@count")
                DerivedAttributeDescription("searchCity", .string, "canonical:(city)")
                FetchIndex("searchCity")
            }
        }
    }

    /// v2 → v3: ages parsed (unparsable ones 0), one address per distinct street and city.
    static let splitAddresses: @Sendable (MigrationSnapshot, RecordTransaction) throws -> Void = { old, new in
        var addresses: [String: ObjectID] = [:]
        for id in try old.objects("Person") {
            let values = try #require(try old.values(of: id))
            var age: Int64 = 0
            if case .string(let text) = values["age"] { age = Int64(text) ?? 0 }
            try new.update(id, ["age": age, "email": "\(id.primaryKey)@example.com"])
            guard case .string(let street) = values["street"], case .string(let city) = values["city"],
                  !street.isEmpty else { continue }
            let key = "\(street)|\(city)"
            let address = try addresses[key] ?? new.insert("Address", ["street": street, "city": city])
            addresses[key] = address
            try new.set("address", of: id, to: address)
        }
    }

    static func plan(progress: (@Sendable (MigrationProgress) -> Void)? = nil) throws -> MigrationPlan {
        try MigrationPlan(stages: [
            .lightweight(from: try v1(), to: try v2()),
            .custom(from: try v2(), to: try v3(), migrate: splitAddresses),
        ], progress: progress)
    }

    static func options(_ fs: SimulatedFileSystem, readOnly: Bool = false) -> StoreOptions {
        var o = StoreOptions(durability: .normal)
        o.fileSystem = fs
        o.readOnly = readOnly
        return o
    }

    static let path = "/db/records.strata"

    /// A version-1 store: three people, two at one address, friends of each other.
    @discardableResult
    static func seedV1(_ fs: SimulatedFileSystem) throws -> [ObjectID] {
        let store = try RecordStore(path: path, model: try v1(), options: options(fs))
        let people = try store.write { tx -> [ObjectID] in
            let ann = try tx.insert("Person", ["name": "Ann", "age": "41", "street": "1 Quay", "city": "Åre"])
            let bob = try tx.insert("Person", ["name": "Bob", "age": "forty", "street": "1 Quay", "city": "Åre"])
            let cy = try tx.insert("Person", ["name": "Cy"])
            try tx.add(bob, to: "friends", of: ann)
            try tx.add(cy, to: "friends", of: ann)
            return [ann, bob, cy]
        }
        try store.close()
        return people
    }

    static func storedVersion(_ store: RecordStore) throws -> Int? {
        try store.storage.read { tx in
            try RecordTrees.storedModelVersion(try tx.tree(RecordTrees.meta)?.get(RecordTrees.modelVersionKey))
        }
    }

    /// What the plan makes of ``seedV1(_:)``.
    static func expectMigrated(_ store: RecordStore, _ people: [ObjectID], label: String = "") throws {
        let (ann, bob, cy) = (people[0], people[1], people[2])
        #expect(try store.value("age", of: ann) == .int(41), "\(label)")
        #expect(try store.value("age", of: bob) == .int(0), "\(label)")
        #expect(try store.value("email", of: cy) == .string("\(cy.primaryKey)@example.com"), "\(label)")
        let address = try #require(try store.read { try $0.target(of: "address", of: ann) })
        #expect(try store.read { try $0.target(of: "address", of: bob) } == address, "\(label)")
        #expect(try store.read { try $0.target(of: "address", of: cy) } == nil, "\(label)")
        #expect(try store.value("residentCount", of: address) == .int(2), "\(label)")
        #expect(try store.value("searchCity", of: address) == .string("are"), "\(label)")
        #expect(try store.value("cityName", of: ann) == .string("Åre"), "\(label)")
        #expect(try store.read { try $0.members(of: "friends", of: ann) } == [bob, cy], "\(label)")
        #expect(try store.read { try $0.members(of: "friendOf", of: cy) } == [ann], "\(label)")
        #expect(try store.read { try $0.count("Address") } == 1, "\(label)")
        #expect(try storedVersion(store) == 3, "\(label)")
        try expectConsistent(store, label)
        let report = try store.storage.check()
        #expect(report.isClean, "\(label): \(report.problems)")
    }

    @Test func aPlanRunsEveryStageFromTheStoredVersionInOrder() throws {
        let fs = SimulatedFileSystem()
        let people = try Self.seedV1(fs)
        let told = Mutex<[MigrationProgress]>([])
        let plan = try Self.plan { progress in told.withLock { $0.append(progress) } }
        let store = try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs), migration: .plan(plan))
        try Self.expectMigrated(store, people)
        // Keys go on where they were; the new entity starts at 1.
        let dee = try store.write { tx in try tx.insert("Person", ["name": "Dee", "age": 9, "email": "dee@x"]) }
        #expect(dee.primaryKey == 4)
        try store.close()

        let progress = told.withLock { $0 }
        #expect(progress.map(\.stage) == progress.map(\.stage).sorted())
        #expect(Set(progress.map(\.stageCount)) == [2])
        let phases = progress.filter { $0.stage == 1 }.map(\.phase)
        #expect(phases == [.reading, .writing, .migrating, .deriving, .finished])
        #expect(progress.filter { $0.stage == 0 }.map(\.phase) == [.reading, .writing, .deriving, .finished])
        #expect(progress.allSatisfy { $0.totalRows == 3 && $0.completedRows <= 3 })
        #expect(progress.first { $0.stage == 1 }.map { ($0.fromVersion, $0.toVersion) } ?? (0, 0) == (2, 3))

        // Reopened with the plan, nothing runs again; without it, the store is simply at version 3.
        let again = try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs),
                                    migration: .plan(try Self.plan { _ in Issue.record("a migration ran again") }))
        #expect(try again.read { try $0.count("Person") } == 4)
        try again.close()
        let plain = try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs))
        try expectConsistent(plain)
        // The stages dropped and re-created every record tree in one transaction: the space
        // they freed is accounted (once lost for a name dropped twice: TreeLifecycleTests).
        let report = try plain.storage.check()
        #expect(report.isClean, "\(report.problems)")
        try plain.close()
    }

    @Test func aStoreAtAMiddleVersionRunsOnlyTheStagesAfterIt() throws {
        let fs = SimulatedFileSystem()
        let people = try Self.seedV1(fs)
        let middle = try RecordStore(path: Self.path, model: try Self.v2(), options: Self.options(fs),
                                     migration: .plan(try MigrationPlan(stages: [.lightweight(from: try Self.v1(), to: try Self.v2())])))
        #expect(try Self.storedVersion(middle) == 2)
        #expect(try middle.value("email", of: people[0]) == .string(""))
        try middle.close()
        let stages = Mutex<Set<Int>>([])
        let store = try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs),
                                    migration: .plan(try Self.plan { p in stages.withLock { _ = $0.insert(p.stageCount) } }))
        try Self.expectMigrated(store, people)
        #expect(stages.withLock { $0 } == [1])
        try store.close()
    }

    /// A store written before versions holds no version entry: the plan's earliest version whose
    /// model it holds is where the stages start.
    @Test func aStoreWithoutAVersionStartsAtTheVersionWhoseModelItHolds() throws {
        let fs = SimulatedFileSystem()
        let people = try Self.seedV1(fs)
        let store = try RecordStore(path: Self.path, model: try Self.v1(), options: Self.options(fs))
        try store.storage.write { tx in _ = try tx.tree(RecordTrees.meta)!.delete(RecordTrees.modelVersionKey) }
        #expect(try Self.storedVersion(store) == nil)
        try store.close()
        let migrated = try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs),
                                       migration: .plan(try Self.plan()))
        try Self.expectMigrated(migrated, people)
        try migrated.close()
    }

    struct StageFailed: Error, Equatable {}

    /// A stage that throws, or whose result breaks the new model's rules, changes nothing: the
    /// store opens at its old version with its old rows.
    @Test func aFailingStageChangesNothing() throws {
        let fs = SimulatedFileSystem()
        let people = try Self.seedV1(fs)
        let failures: [(String, @Sendable (MigrationSnapshot, RecordTransaction) throws -> Void, (any Error) -> Bool)] = [
            ("throws", { old, new in
                try MigrationPlanTests.splitAddresses(old, new)
                throw StageFailed()
            }, { $0 as? StageFailed == StageFailed() }),
            ("leaves a required value unset", { old, new in
                for id in try old.objects("Person") { try new.update(id, ["email": "\(id.primaryKey)"]) }
            }, { error in
                if case StrataError.validation(let entity, _, _) = error { return entity == "Person" }
                if case StrataError.invalidObject(let entity, _, _, _) = error { return entity == "Person" }
                return false
            }),
            ("breaks uniqueness", { old, new in
                for id in try old.objects("Person") { try new.update(id, ["age": 1, "email": "same"]) }
            }, { error in
                if case StrataError.conflict(let entity, let properties, _) = error { return entity == "Person" && properties == ["email"] }
                return false
            }),
            ("writes an unknown property", { old, new in
                try new.update(try old.objects("Person")[0], ["street": "gone"])
            }, { error in
                if case StrataError.validation(_, let property, _) = error { return property == "street" }
                return false
            }),
        ]
        for (label, migrate, expected) in failures {
            let plan = try MigrationPlan(stages: [
                .lightweight(from: try Self.v1(), to: try Self.v2()),
                .custom(from: try Self.v2(), to: try Self.v3(), migrate: migrate),
            ])
            do {
                _ = try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs), migration: .plan(plan))
                Issue.record("\(label): the migration succeeded")
            } catch {
                #expect(expected(error), "\(label): threw \(error)")
            }
            let store = try RecordStore(path: Self.path, model: try Self.v1(), options: Self.options(fs))
            #expect(try Self.storedVersion(store) == 1, "\(label)")
            #expect(try store.value("age", of: people[1]) == .string("forty"), "\(label)")
            #expect(try store.read { try $0.members(of: "friends", of: people[0]) } == [people[1], people[2]], "\(label)")
            try expectConsistent(store, label)
            try store.close()
        }
    }

    @Test func aStoreNewerThanTheModelIsRefusedWhateverThePolicy() throws {
        let fs = SimulatedFileSystem()
        try Self.seedV1(fs)
        try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs), migration: .plan(try Self.plan())).close()
        let older: [(Model, MigrationPolicy)] = [
            (try Self.v1(), .none), (try Self.v1(), .lightweight), (try Self.v2(), .lightweight),
            (try Self.v2(), .plan(try MigrationPlan(stages: [.lightweight(from: try Self.v1(), to: try Self.v2())]))),
        ]
        for (model, policy) in older {
            do {
                _ = try RecordStore(path: Self.path, model: model, options: Self.options(fs), migration: policy)
                Issue.record("version \(model.version) opened a version-3 store")
            } catch StrataError.unsupportedModelVersion(let found, let supported) {
                #expect(found == 3 && supported == model.version)
            }
        }
        // Nothing was changed by the refusals.
        let store = try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs))
        #expect(try Self.storedVersion(store) == 3)
        try store.close()
    }

    @Test func badPlansAndStoresOutsideThePlanAreRefusedWithTypedErrors() throws {
        let v1 = try Self.v1(), v2 = try Self.v2(), v3 = try Self.v3()
        func expectInvalid(_ label: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(label): accepted")
            } catch StrataError.invalidArgument {
            } catch {
                Issue.record("\(label): threw \(error)")
            }
        }
        expectInvalid("no stages") { _ = try MigrationPlan(stages: []) }
        expectInvalid("a stage that lowers the version") { _ = try MigrationPlan(stages: [.lightweight(from: v2, to: v1)]) }
        expectInvalid("a gap") {
            _ = try MigrationPlan(stages: [.lightweight(from: v1, to: v2), .lightweight(from: v1, to: v3)])
        }
        expectInvalid("another model at the joint") {
            let other = try Model(version: 2) { Entity("Person") { AttributeDescription("name", .string) } }
            _ = try MigrationPlan(stages: [.lightweight(from: v1, to: v2), .lightweight(from: other, to: v3)])
        }
        expectInvalid("version 0") { _ = try Model(version: 0) { Entity("A") { AttributeDescription("x", .string) } } }

        let fs = SimulatedFileSystem()
        try Self.seedV1(fs)
        expectInvalid("a plan that does not end at the model opened") {
            _ = try RecordStore(path: Self.path, model: v3, options: Self.options(fs),
                                migration: .plan(try MigrationPlan(stages: [.lightweight(from: v1, to: v2)])))
        }
        // A store written before versions holding none of the plan's models.
        let stranger = SimulatedFileSystem()
        let other = try RecordStore(path: Self.path, model: try Model { Entity("Other") { AttributeDescription("x", .string) } },
                                    options: Self.options(stranger))
        try other.storage.write { tx in _ = try tx.tree(RecordTrees.meta)!.delete(RecordTrees.modelVersionKey) }
        try other.close()
        do {
            _ = try RecordStore(path: Self.path, model: v3, options: Self.options(stranger), migration: .plan(try Self.plan()))
            Issue.record("a store outside the plan was migrated")
        } catch StrataError.modelMismatch(let differences) {
            #expect(differences.first?.contains("none of the migration plan's versions") == true)
        }
        // A store at version 1 holding another model than the plan's version 1.
        let drifted = SimulatedFileSystem()
        try RecordStore(path: Self.path, model: try Model(version: 1) { Entity("Person") { AttributeDescription("name", .string) } },
                        options: Self.options(drifted)).close()
        do {
            _ = try RecordStore(path: Self.path, model: v3, options: Self.options(drifted), migration: .plan(try Self.plan()))
            Issue.record("a store with another version-1 model was migrated")
        } catch StrataError.modelMismatch(let differences) {
            #expect(differences.first?.contains("not the plan's version 1") == true)
        }
        // A read-only open cannot migrate.
        do {
            _ = try RecordStore(path: Self.path, model: v3, options: Self.options(fs, readOnly: true), migration: .plan(try Self.plan()))
            Issue.record("a read-only store was migrated")
        } catch StrataError.readOnly {}
    }

    /// A stage may change data without changing the model (the versions differ, the schema
    /// text does not): it runs once, and the store records the new version.
    @Test func aStageWithTheSameSchemaRunsItsCodeOnce() throws {
        let fs = SimulatedFileSystem()
        let people = try Self.seedV1(fs)
        let v1 = try Self.v1()
        let v1b = try Model(version: 2, entities: [Self.person(email: false)])
        let runs = Mutex(0)
        let plan = try MigrationPlan(stages: [.custom(from: v1, to: v1b) { old, new in
            runs.withLock { $0 += 1 }
            for id in try old.objects("Person") {
                if case .string(let name) = try old.value("name", of: id) { try new.update(id, ["name": name.uppercased()]) }
            }
        }])
        for _ in 0..<2 {
            let store = try RecordStore(path: Self.path, model: v1b, options: Self.options(fs), migration: .plan(plan))
            #expect(try store.value("name", of: people[0]) == .string("ANN"))
            #expect(try Self.storedVersion(store) == 2)
            try store.close()
        }
        #expect(runs.withLock { $0 } == 1)
    }


    /// The snapshot's reading calls: what a stage's code sees of the old objects, and the typed
    /// errors for what it does not hold.
    @Test func theSnapshotReadsTheOldObjects() throws {
        let fs = SimulatedFileSystem()
        let people = try Self.seedV1(fs)
        let seen = Mutex<[String]>([])
        let plan = try MigrationPlan(stages: [.custom(from: try Self.v1(), to: try Self.v2()) { old, _ in
            var lines: [String] = []
            lines.append("count \(try old.count("Person"))")
            lines.append("friends \(try old.members(of: "friends", of: people[0]).map(\.primaryKey))")
            lines.append("friendOf \(try old.members(of: "friendOf", of: people[2]).map(\.primaryKey))")
            lines.append("exists \(try old.exists(ObjectID(entity: "Person", primaryKey: 99)))")
            lines.append("city \(try old.value("city", of: people[1]))")
            for attempt: () throws -> Void in [
                { _ = try old.objects("Address") },
                { _ = try old.value("email", of: people[0]) },
                { _ = try old.target(of: "friends", of: people[0]) },
                { _ = try old.members(of: "name", of: people[0]) },
            ] {
                do { try attempt(); lines.append("accepted") } catch StrataError.invalidArgument { lines.append("invalid") }
            }
            do { _ = try old.value("name", of: ObjectID(entity: "Person", primaryKey: 99)) } catch StrataError.objectNotFound {
                lines.append("not found")
            }
            seen.withLock { $0 = lines }
        }])
        try RecordStore(path: Self.path, model: try Self.v2(), options: Self.options(fs), migration: .plan(plan)).close()
        #expect(seen.withLock { $0 } == [
            "count 3", "friends [2, 3]", "friendOf [1]", "exists false", "city \"Åre\"",
            "invalid", "invalid", "invalid", "invalid", "not found",
        ])
    }
}

extension MigrationPlanTests {
    /// A crash at every file operation of a migration (the image at that point, then a crash
    /// that loses what was not synced, torn as the seed says): the store opens either at version
    /// 1 with its old rows, or at version 3 migrated whole — never in between.
    @Test func aCrashAnywhereInAMigrationLeavesTheOldStoreOrTheNewOne() throws {
        let fs = SimulatedFileSystem()
        let people = try Self.seedV1(fs)
        let before = fs.mutationCount
        let images = Mutex<[SimulatedFileSystem]>([])
        fs.onMutation { _, _ in images.withLock { $0.append(fs.clone()) } }
        try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(fs), migration: .plan(try Self.plan())).close()
        fs.onMutation(nil)
        let points = images.withLock { $0 }
        #expect(points.count == fs.mutationCount - before)
        var old = 0, new = 0
        for (n, image) in points.enumerated() {
            image.crash(seed: UInt64(n) &+ 7)
            let label = "crash at operation \(n) of \(points.count) of the migration"
            do {
                let store = try RecordStore(path: Self.path, model: try Self.v1(), options: Self.options(image))
                #expect(try Self.storedVersion(store) == 1, "\(label)")
                #expect(try store.value("age", of: people[1]) == .string("forty"), "\(label)")
                #expect(try store.read { try $0.members(of: "friends", of: people[0]) } == [people[1], people[2]], "\(label)")
                try expectConsistent(store, label)
                try store.close()
                old += 1
            } catch StrataError.unsupportedModelVersion(let found, _) {
                #expect(found == 3, "\(label)")
                new += 1
            }
            // Either way, the program with the plan gets the migrated store.
            let store = try RecordStore(path: Self.path, model: try Self.v3(), options: Self.options(image),
                                        migration: .plan(try Self.plan()))
            try Self.expectMigrated(store, people, label: label)
            try store.close()
        }
        #expect(old > 0 && new > 0, "old \(old), new \(new)")
        print("MigrationPlanTests crash points: \(points.count) (old store \(old), migrated \(new))")
    }
}
