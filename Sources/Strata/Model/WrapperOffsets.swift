@_spi(Reflection) import Swift

/// Where each property wrapper of a model class lies in its objects: the slot of the wrapper at
/// each byte offset (decision 72). An accessor finds its slot from its wrapper's address — a
/// field of the object the compiler reaches directly — instead of materializing the storage key
/// path and looking its identity up (a key path object and two atomic reference counts a read).
///
/// The offsets come from the runtime's field reflection (`_forEachField`, the metadata `Mirror`
/// reads, so the names agree with the schema's): every field named `_<property>` whose type is
/// one of the wrappers. Offsets a class does not have, or that hold no wrapper, map to -1.
struct WrapperOffsets {
    /// The slot of the wrapper at each byte offset of an object, or -1.
    let slotByOffset: [Int16]

    static let none = WrapperOffsets(slotByOffset: [])

    /// Reads the layout of `type`; `slotByName` names the schema's slots.
    init(of type: ManagedObject.Type, slotByName: [String: Int]) {
        var pairs: [(offset: Int, slot: Int)] = []
        // `.classType` and `.ignoreUnknown` by their values (1, 2): the stdlib declares the
        // options as mutable statics, which Swift 6 refuses to read. A field of a kind the
        // reflection does not know is skipped, not the class: the count check in the schema
        // still catches a wrapper it missed.
        let complete = _forEachField(of: type, options: _EachFieldOptions(rawValue: 3)) { name, offset, fieldType, _ in
            let label = String(cString: name)
            if label.hasPrefix("_"), fieldType is any ManagedPropertyWrapper.Type,
               let slot = slotByName[String(label.dropFirst())], slot <= Int(Int16.max) {
                pairs.append((offset, slot))
            }
            return true
        }
        guard complete, let last = pairs.map(\.offset).max() else {
            slotByOffset = []
            return
        }
        var table = [Int16](repeating: -1, count: last + 1)
        for (offset, slot) in pairs { table[offset] = Int16(slot) }
        slotByOffset = table
    }

    private init(slotByOffset: [Int16]) { self.slotByOffset = slotByOffset }

    /// The slot of the wrapper at `offset`, or -1.
    @inline(__always)
    func slot(at offset: Int) -> Int {
        offset >= 0 && offset < slotByOffset.count ? Int(slotByOffset[offset]) : -1
    }

    /// How many wrappers were found.
    var count: Int { slotByOffset.lazy.filter { $0 >= 0 }.count }
}

/// The property wrappers of the object layer (so the schema builder can tell them from a
/// class's other stored properties).
protocol ManagedPropertyWrapper {}
