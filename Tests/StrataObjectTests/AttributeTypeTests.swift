import Foundation
import Strata
import Testing

/// Every attribute type of the record layer through a model class, optional and not, and
/// seed 002's remaining derived forms (`uppercase:`, `now()`).
final class Everything: ManagedObject {
    @Attribute var flag: Bool
    @Attribute var int: Int
    @Attribute var int16: Int16
    @Attribute var int32: Int32
    @Attribute var int64: Int64
    @Attribute var double: Double
    @Attribute var decimal: Decimal
    @Attribute var string: String
    @Attribute var date: Date
    @Attribute var uuid: UUID
    @Attribute var bytes: [UInt8]
    @Attribute var data: Data
    @Attribute var optionalFlag: Bool?
    @Attribute var optionalInt16: Int16?
    @Attribute var optionalDouble: Double?
    @Attribute var optionalDecimal: Decimal?
    @Attribute var optionalString: String?
    @Attribute var optionalDate: Date?
    @Attribute var optionalUUID: UUID?
    @Attribute var optionalData: Data?
    @Attribute(default: 7) var withDefault: Int32
    @Derived("uppercase:(string)") var shout: String
    @Derived("now()") var touched: Date?
}

@Suite struct AttributeTypeTests {
    /// The key-based API takes any number an attribute holds exactly, as Core Data's key-value
    /// coding takes any NSNumber that fits; others are `validation` naming the key (decision 45).
    @Test func keyedSetsTakeAnyNumberTheAttributeHoldsExactly() throws {
        let cases: [(key: String, value: Any, stored: Any?)] = [
            ("int64", 5, Int64(5)), ("int64", Int32(-7), Int64(-7)), ("int64", 2.0, Int64(2)), ("int64", UInt8(255), Int64(255)),
            ("int64", Decimal(12), Int64(12)), ("int64", 0.5, nil), ("int64", UInt64.max, nil), ("int64", Double.nan, nil),
            ("int16", 300, Int16(300)), ("int16", 70_000, nil), ("int16", Int64(Int16.min), Int16.min), ("int32", Float(3), Int32(3)),
            ("int", Int16(9), 9), ("optionalInt16", 4, Int16?(4)),
            ("double", 5, 5.0), ("double", Float(0.5), 0.5), ("double", Int64(1) << 53, Double(1 << 53)),
            ("double", (Int64(1) << 53) + 1, nil), ("double", Decimal(string: "0.25")!, 0.25),
            ("decimal", 7, Decimal(7)), ("decimal", 0.1, Decimal(string: "0.1")!), ("optionalDecimal", Int8(-1), Decimal?(-1)),
            ("string", 5, nil), ("flag", 1, nil), ("date", 0, nil),
        ]
        try withContainer(for: [Everything.self]) { container in
            let context = ModelContext(container)
            let e = Everything()
            context.insert(e)
            for (key, value, stored) in cases {
                let before = try e.value(forKey: key)
                do {
                    try e.setValue(value, forKey: key)
                    let read = try e.value(forKey: key)
                    #expect(stored != nil, "\(key) = \(value) (\(type(of: value))) was taken as \(String(describing: read))")
                    #expect(String(describing: read) == String(describing: stored), "\(key) = \(value): reads \(String(describing: read))")
                    if let read, let stored { #expect(type(of: read) == type(of: stored), "\(key) = \(value): reads a \(type(of: read))") }
                } catch StrataError.validation(let entity, let property, _) {
                    #expect(stored == nil && entity == "Everything" && property == key, "\(key) = \(value) (\(type(of: value))) refused")
                    #expect(String(describing: try e.value(forKey: key)) == String(describing: before), "\(key): a refused set changed it")
                }
            }
        }
    }

    /// Decision 45: a required attribute never set reads as its placeholder, `value(forKey:)`
    /// says nil, and the save refuses it naming the attribute.
    @Test func aRequiredAttributeNeverSetIsNilByKeyAndRefusedAtSave() throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            let j = Journal()
            context.insert(j)
            #expect(j.title == "")
            #expect(try j.value(forKey: "title") == nil)
            #expect(throws: StrataError.self) { try context.save() }
            do { try context.save() } catch StrataError.validation(let entity, let property, _) {
                #expect(entity == "Journal" && property == "title")
            }
            j.title = ""
            #expect(try j.value(forKey: "title") as? String == "")
            try context.save()
        }
    }

    /// `import Strata` names every type its API shows (the storage layer's too).
    @Test func theStorageTypesOfTheAPIAreNamedThroughStrata() {
        var options = StoreOptions()
        options.durability = Durability.normal
        #expect(options.durability == .normal)
        let conflicts: [MergeConflictRecord] = []
        #expect(conflicts.isEmpty)
    }
    @Test func everyTypeRoundTripsOptionalAndNot() throws {
        try withContainer(for: [Everything.self]) { container in
            let context = ModelContext(container)
            let e = Everything()
            #expect(e.withDefault == 7)
            e.flag = true; e.int = -42; e.int16 = .max; e.int32 = .min; e.int64 = .max; e.double = 0.1
            e.decimal = Decimal(string: "12345678901234567890.0123456789")!
            e.string = "Straße ΣΑΣ"; e.date = Date(timeIntervalSinceReferenceDate: 1_000_000.5)
            e.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
            e.bytes = [0, 1, 255]; e.data = Data([9, 8, 7])
            e.optionalFlag = false; e.optionalInt16 = -3; e.optionalDouble = nil; e.optionalDecimal = 5
            e.optionalString = nil; e.optionalDate = Date(timeIntervalSinceReferenceDate: 0); e.optionalUUID = nil; e.optionalData = Data()
            context.insert(e)
            let before = Date()
            try context.save()
            #expect(e.shout == "STRASSE ΣΑΣ")
            let touched = try #require(e.touched)
            #expect(abs(touched.timeIntervalSince(before)) < 60)

            let other = try ModelContext(container).existingObject(with: e.objectID, as: Everything.self)
            #expect(other.flag == true && other.int == -42 && other.int16 == .max && other.int32 == .min && other.int64 == .max)
            #expect(other.double == 0.1 && other.decimal == Decimal(string: "12345678901234567890.0123456789")!)
            #expect(other.string == "Straße ΣΑΣ" && other.date == Date(timeIntervalSinceReferenceDate: 1_000_000.5))
            #expect(other.uuid == e.uuid && other.bytes == [0, 1, 255] && other.data == Data([9, 8, 7]))
            #expect(other.optionalFlag == false && other.optionalInt16 == -3 && other.optionalDouble == nil)
            #expect(other.optionalDecimal == 5 && other.optionalString == nil && other.optionalDate == Date(timeIntervalSinceReferenceDate: 0))
            #expect(other.optionalUUID == nil && other.optionalData == Data())
            #expect(other.withDefault == 7 && other.shout == "STRASSE ΣΑΣ" && other.touched == e.touched)
            #expect(try other.value(forKey: "optionalString") == nil)
            #expect(try other.value(forKey: "int16") as? Int16 == .max)
        }
    }

    @Test func aRequiredAttributeLeftUnsetFailsTheSaveNamingIt() throws {
        try withContainer(for: [Everything.self]) { container in
            let context = ModelContext(container)
            context.insert(Everything())
            do {
                try context.save()
                Issue.record("a save with required attributes unset succeeded")
            } catch let error as StrataError {
                #expect("\(error)".contains("Everything"), "\(error)")
            }
        }
    }
}
