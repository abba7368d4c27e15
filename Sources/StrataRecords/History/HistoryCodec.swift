import Foundation
import StrataStorage

/// The stored form of one recorded transaction (FORMAT.md §12, "History"): a header (version,
/// commit time, storage transaction, author), a table of the names the changes use (entities,
/// properties, relationships: each once), then the changes, each naming its entity and
/// properties by their index in that table. Values carry a type tag, so an entry reads without
/// the model that wrote it (a later model may have renamed or dropped what it names).
enum HistoryCodec {
    static let version: UInt8 = 1

    /// A value's flags: bit 0, a derived attribute; bit 1, a to-one relationship (a target
    /// follows instead of a tagged value).
    static let derivedFlag: UInt8 = 1
    static let toOneFlag: UInt8 = 2

    /// The entry for `changes`, or `nil` when they hold nothing a consumer would see (a commit
    /// that moved only bookkeeping fields).
    static func encode(_ changes: RecordChanges, model: Model, date: Date, author: String?) -> [UInt8]? {
        var encoder = HistoryEncoder(model: model)
        encoder.appendRows(changes.inserted, .insert)
        encoder.appendRows(changes.updated, .update)
        encoder.appendRows(changes.deleted, .delete)
        for link in changes.links { encoder.appendLink(link) }
        return encoder.finish(transactionID: changes.transactionID, date: date, author: author)
    }

    /// Reads the entry stored under `token`. Throws `corrupt` (naming the token) when the bytes
    /// do not hold one whole entry: nothing an entry holds can read past it or trap.
    static func decode(_ bytes: UnsafeRawBufferPointer, token: UInt64) throws -> HistoryTransaction {
        do {
            return try readEntry(bytes, token: token, keep: true)
        } catch StrataError.corrupt(let what, _) {
            throw StrataError.corrupt("history entry \(token): \(what)", offset: nil)
        }
    }

    /// Checks the entry stored under `token` as ``decode(_:token:)`` would read it, building
    /// nothing: the same reader, keeping no name, value or change (the record check's pass
    /// over the whole history).
    static func validate(_ bytes: UnsafeRawBufferPointer, token: UInt64) throws {
        do {
            _ = try readEntry(bytes, token: token, keep: false)
        } catch StrataError.corrupt(let what, _) {
            throw StrataError.corrupt("history entry \(token): \(what)", offset: nil)
        }
    }

    /// The commit time of the entry stored under `token`, read from its header alone.
    static func date(_ bytes: UnsafeRawBufferPointer, token: UInt64) throws -> Date {
        var reader = RowCodec.Reader(bytes: bytes)
        do {
            return try readDate(&reader)
        } catch StrataError.corrupt(let what, _) {
            throw StrataError.corrupt("history entry \(token): \(what)", offset: nil)
        }
    }

    /// The version byte and the commit time that open every entry.
    private static func readDate(_ reader: inout RowCodec.Reader) throws -> Date {
        guard try reader.byte() == version else { throw StrataError.corrupt("unknown version", offset: nil) }
        let seconds = Double(bitPattern: try reader.u64())
        guard seconds.isFinite else { throw StrataError.corrupt("commit time is not finite", offset: nil) }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// Reads one entry, every byte checked whether or not it is kept. Without `keep` no string,
    /// dictionary or change is built: the transaction returned holds no author and no change.
    private static func readEntry(_ bytes: UnsafeRawBufferPointer, token: UInt64, keep: Bool) throws -> HistoryTransaction {
        var reader = RowCodec.Reader(bytes: bytes)
        let date = try readDate(&reader)
        let transactionID = try reader.varint()
        let authorBytes = try reader.take(try reader.length())
        // Each name takes at least its length byte, each change at least three bytes: counts
        // beyond the entry's size are damage, refused before anything is reserved.
        let nameCount = try reader.length()
        var names: [String] = []
        for _ in 0..<nameCount {
            let name = try reader.take(try reader.length())
            if keep { names.append(String(decoding: name, as: UTF8.self)) }
        }
        func nameIndex(_ reader: inout RowCodec.Reader) throws -> Int {
            let index = try reader.varint()
            guard index < UInt64(nameCount) else {
                throw StrataError.corrupt("name index \(index) of \(nameCount) names", offset: nil)
            }
            return Int(index)
        }
        let changeCount = try reader.length()
        var changes: [HistoryChange] = []
        for _ in 0..<changeCount {
            guard let kind = HistoryChange.Kind(rawValue: try reader.byte()) else {
                throw StrataError.corrupt("unknown change kind", offset: nil)
            }
            let entity = try nameIndex(&reader)
            let primaryKey = try reader.varint()
            var change = keep ? HistoryChange(kind: kind, id: ObjectID(entity: names[entity], primaryKey: primaryKey)) : nil
            switch kind {
            case .link, .unlink:
                let relationship = try nameIndex(&reader)
                let other = try nameIndex(&reader)
                let otherKey = try reader.varint()
                change?.relationship = names[relationship]
                change?.other = ObjectID(entity: names[other], primaryKey: otherKey)
            case .insert, .update, .delete:
                let valueCount = try reader.length()
                for _ in 0..<valueCount {
                    let property = try nameIndex(&reader)
                    let flags = try reader.byte()
                    guard flags & ~(derivedFlag | toOneFlag) == 0, flags != derivedFlag | toOneFlag else {
                        throw StrataError.corrupt("value flags \(flags)", offset: nil)
                    }
                    if flags & toOneFlag != 0 {
                        switch try reader.byte() {
                        case 0: change?.toOneTargets[names[property]] = .some(nil)
                        case 1:
                            let target = try nameIndex(&reader)
                            let targetKey = try reader.varint()
                            change?.toOneTargets[names[property]] = ObjectID(entity: names[target], primaryKey: targetKey)
                        default: throw StrataError.corrupt("to-one marker", offset: nil)
                        }
                        continue
                    }
                    guard let tag = StoredValue.Tag(rawValue: try reader.byte()) else {
                        throw StrataError.corrupt("unknown value tag", offset: nil)
                    }
                    let value = try tag.type.map { try RowCodec.readValue($0, from: &reader) } ?? .null
                    if case .double(let double) = value, double.isNaN {
                        throw StrataError.corrupt("a double value is NaN", offset: nil)
                    }
                    change?.values[names[property]] = value
                    if flags & derivedFlag != 0 { change?.derivedNames.insert(names[property]) }
                }
            }
            if let change { changes.append(change) }
        }
        guard reader.at == bytes.count else {
            throw StrataError.corrupt("\(bytes.count - reader.at) bytes after the last change", offset: nil)
        }
        return HistoryTransaction(token: HistoryToken(token), transactionID: transactionID, date: date,
                                  author: keep && !authorBytes.isEmpty ? String(decoding: authorBytes, as: UTF8.self) : nil,
                                  changes: changes)
    }
}
