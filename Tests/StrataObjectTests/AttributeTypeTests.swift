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
