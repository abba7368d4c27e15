import Foundation
import Strata
import StrataTesting
import Testing

/// `changedValuesForCurrentEvent()` names exactly the properties set since the event began,
/// whichever slot they sit in: the first slots are kept as flag bits, the rest in the object's
/// extras (decision 57), so a class with more properties than bits is checked against a model
/// of the event, across `processPendingChanges`, saves and rollbacks.
@Suite struct EventChangesTests {
    /// Sets `key` of `object` to a value different from its current one.
    private func change(_ object: Everything, _ key: String, _ step: Int) {
        switch key {
        case "flag": object.flag.toggle()
        case "int": object.int += 1
        case "int16": object.int16 = object.int16 &+ 1
        case "int64": object.int64 += 1
        case "double": object.double += 1
        case "string": object.string = "s\(step)"
        case "optionalString": object.optionalString = "o\(step)"
        case "withDefault": object.withDefault += 1
        default: Issue.record("no setter for \(key)")
        }
    }

    @Test(arguments: [UInt64(7), 8, 9])
    func theEventNamesExactlyWhatWasSet(seed: UInt64) throws {
        // Slots 0, 1, 2, 4, 5 sit in the flag bits; string (7), optionalString and withDefault past them.
        let keys = ["flag", "int", "int16", "int64", "double", "string", "optionalString", "withDefault"]
        var rng = SplitMix64(seed: seed)
        try withContainer(for: [Everything.self]) { container in
            let context = ModelContext(container)
            let object = Everything()
            // Every required attribute given a value, so saves pass validation.
            object.flag = false; object.int = 0; object.int16 = 0; object.int32 = 0; object.int64 = 0
            object.double = 0; object.decimal = 0; object.string = ""; object.date = Date(timeIntervalSinceReferenceDate: 0)
            object.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!; object.bytes = []; object.data = Data()
            context.insert(object)
            try context.save()
            var event: Set<String> = []
            for step in 0..<300 {
                switch rng.next() % 10 {
                case 0:
                    context.processPendingChanges()
                    event = []
                case 1:
                    try context.save()
                    event = []
                case 2:
                    context.rollback()
                    event = []
                default:
                    let key = keys[Int(rng.next() % UInt64(keys.count))]
                    change(object, key, step)
                    event.insert(key)
                }
                #expect(Set(object.changedValuesForCurrentEvent().keys) == event, "seed \(seed) step \(step)")
            }
        }
    }
}
