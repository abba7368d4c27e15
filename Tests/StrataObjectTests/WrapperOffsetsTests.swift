import Foundation
@testable import Strata
import Testing

/// A class that mixes every wrapper with plain stored properties of every size and kind, so
/// wrappers land in the superclass's tail padding, between words and after strings.
final class Patchwork: ManagedObject {
    var plainByte: UInt8 = 7
    @Attribute var a: String
    var plainShort: UInt16 = 9
    @Attribute(default: 0) var b: Int64
    @Transient var c: Bool
    var plainText = "not persistent"
    @Attribute var d: Double?
    @CodableAttribute var e: [String: Int] = [:]
    var plainDouble = 2.5
    @Relationship var f: Patchwork?
    @Relationship(inverse: \Patchwork.f) var g: [Patchwork]
    @Attribute var h: Date?
    @Derived("g.@count") var i: Int64
    @Attribute(default: false) var j: Bool
    // Fields of every other kind the runtime reflects: none may make the class unreadable.
    weak var weakPartner: Patchwork?
    var callback: (() -> Void)?
    lazy var lazyValue = 3
    var anything: Any = 1
}

/// Decision 72: accessors find their slot by their wrapper's offset in the object, read from
/// the class's metadata. Every wrapper must map to its own slot, in declaration order.
@Suite struct WrapperOffsetsTests {
    @Test func everyWrapperLiesAtAnOffsetOfItsOwnSlot() {
        let schema = EntitySchema.of(Patchwork.self)
        #expect(schema.buildError == nil)
        let table = schema.wrapperOffsets.slotByOffset
        let slots = table.filter { $0 >= 0 }.map(Int.init)
        #expect(slots.count == schema.properties.count && Set(slots) == Set(schema.properties.indices),
                "slots by offset \(table)")
        // Declaration order is slot order, and so is the order of the fields in memory.
        #expect(slots == slots.sorted())
    }

    /// Each typed accessor reads and writes its own property: set through the accessor, read by
    /// name, and the other way round, with a value no other property holds.
    @Test func typedAccessorsAndKeysAgreeOnEveryProperty() throws {
        try withContainer(for: [Patchwork.self]) { container in
            let context = ModelContext(container)
            let object = Patchwork()
            let other = Patchwork()
            context.insert(object)
            context.insert(other)
            other.a = "other"
            object.a = "alpha"
            object.b = 42
            object.c = true
            object.d = 1.5
            object.e = ["x": 1]
            object.f = other
            object.h = Date(timeIntervalSince1970: 1_000)
            object.j = true
            #expect(try object.value(forKey: "a") as? String == "alpha")
            #expect(try object.value(forKey: "b") as? Int64 == 42)
            #expect(try object.value(forKey: "c") as? Bool == true)
            #expect(try object.value(forKey: "d") as? Double == 1.5)
            #expect(try object.value(forKey: "h") as? Date == Date(timeIntervalSince1970: 1_000))
            #expect(try object.value(forKey: "j") as? Bool == true)
            #expect((try object.value(forKey: "f") as? Patchwork) === other)
            #expect(other.g.count == 1 && other.g.first === object)
            try context.save()
            #expect(other.i == 1 && object.i == 0)

            try object.setValue("beta", forKey: "a")
            try object.setValue(Int64(7), forKey: "b")
            try object.setValue(2.5, forKey: "d")
            #expect(object.a == "beta" && object.b == 7 && object.d == 2.5 && object.e == ["x": 1])
            #expect(object.plainByte == 7 && object.plainShort == 9 && object.plainText == "not persistent"
                    && object.plainDouble == 2.5)
            try context.save()

            // And from the store, through faults.
            let reread = ModelContext(container)
            let fetched = try reread.fetch(FetchDescriptor<Patchwork>()).first { $0.a == "beta" }
            let found = try #require(fetched)
            #expect(found.b == 7 && found.d == 2.5 && found.e == ["x": 1] && found.j && found.f?.g.count == 1
                    && found.c == false)
        }
    }

    /// Key paths through the wrappers still name their properties (probe prototypes read them
    /// by slot now).
    @Test func keyPathsNameTheirProperties() {
        #expect(ManagedObject.probePath(of: \Patchwork.a) == ["a"])
        #expect(ManagedObject.probePath(of: \Patchwork.e) == ["e"])
        #expect(ManagedObject.probePath(of: \Patchwork.f?.b) == ["f", "b"])
        #expect(ManagedObject.probePath(of: \Patchwork.i) == ["i"])
        #expect(ManagedObject.probePath(of: \Patchwork.c) == ["c"])
        #expect(ManagedObject.probePath(of: \Patchwork.g) == ["g"])
    }
}
