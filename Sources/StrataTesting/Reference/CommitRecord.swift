extension ReferenceFormat {
    /// A commit frame's raw payload (FORMAT.md §5): one transaction's operations, in order, and
    /// nothing after the last.
    ///
    /// | op | operation | fields |
    /// |---|---|---|
    /// | 1 | put | varint tree id, varint key length, key, varint value length, value |
    /// | 2 | delete | varint tree id, varint key length, key |
    /// | 3 | put overflow | varint tree id, varint key length, key, varint value length, u64 frame offset |
    /// | 4 | create tree | varint tree id, varint name length, UTF-8 name |
    /// | 5 | drop tree | varint tree id |
    package enum CommitRecord {
        /// One operation, its fields as written (a forgery may hold any value).
        package enum Operation: Equatable, Sendable {
            case put(tree: UInt64, key: [UInt8], value: [UInt8])
            case delete(tree: UInt64, key: [UInt8])
            case putOverflow(tree: UInt64, key: [UInt8], valueLength: UInt64, frameOffset: UInt64)
            case createTree(id: UInt64, name: [UInt8])
            case dropTree(id: UInt64)

            /// The op byte.
            package var code: UInt8 {
                switch self {
                case .put: return CommitRecord.putCode
                case .delete: return CommitRecord.deleteCode
                case .putOverflow: return CommitRecord.putOverflowCode
                case .createTree: return CommitRecord.createTreeCode
                case .dropTree: return CommitRecord.dropTreeCode
                }
            }
        }

        package static let putCode: UInt8 = 1
        package static let deleteCode: UInt8 = 2
        package static let putOverflowCode: UInt8 = 3
        package static let createTreeCode: UInt8 = 4
        package static let dropTreeCode: UInt8 = 5

        /// The payload holding `operations`, in order.
        package static func encode(_ operations: [Operation]) -> [UInt8] {
            var writer = ByteWriter()
            for operation in operations {
                writer.u8(operation.code)
                switch operation {
                case .put(let tree, let key, let value):
                    writer.varint(tree)
                    writer.varint(UInt64(key.count))
                    writer.append(key)
                    writer.varint(UInt64(value.count))
                    writer.append(value)
                case .delete(let tree, let key):
                    writer.varint(tree)
                    writer.varint(UInt64(key.count))
                    writer.append(key)
                case .putOverflow(let tree, let key, let valueLength, let frameOffset):
                    writer.varint(tree)
                    writer.varint(UInt64(key.count))
                    writer.append(key)
                    writer.varint(valueLength)
                    writer.u64(frameOffset)
                case .createTree(let id, let name):
                    writer.varint(id)
                    writer.varint(UInt64(name.count))
                    writer.append(name)
                case .dropTree(let id):
                    writer.varint(id)
                }
            }
            return writer.bytes
        }

        /// The operations of `payload`, checked against §5's limits: a known op byte, tree ids
        /// below 2^32, keys of 1...1024 bytes, values of at most 64 MiB, names of 1...255 bytes
        /// of valid UTF-8, no operation cut short. (The semantic checks — which trees exist, the
        /// inline rule, where overflow references lead — need the store: they are replay's.)
        package static func decode(_ payload: [UInt8]) throws -> [Operation] {
            var reader = ByteReader(payload)
            var operations: [Operation] = []
            while !reader.isAtEnd {
                let start = reader.position
                let (operation, _) = try next(&reader)
                do {
                    try check(operation)
                } catch let violation as FormatViolation {
                    throw FormatViolation("the operation at payload offset \(start): \(violation)")
                }
                operations.append(operation)
            }
            return operations
        }

        /// Throws when `operation` breaks one of §5's limits.
        private static func check(_ operation: Operation) throws {
            func checkTree(_ id: UInt64) throws {
                guard id <= UInt64(UInt32.max) else { throw FormatViolation("tree id \(id) is not below 2^32") }
            }
            func checkKey(_ key: [UInt8]) throws {
                guard (1...ReferenceFormat.maximumKeyLength).contains(key.count) else {
                    throw FormatViolation("key length \(key.count)")
                }
            }
            switch operation {
            case .put(let tree, let key, let value):
                try checkTree(tree)
                try checkKey(key)
                guard value.count <= ReferenceFormat.maximumValueLength else {
                    throw FormatViolation("value length \(value.count)")
                }
            case .delete(let tree, let key):
                try checkTree(tree)
                try checkKey(key)
            case .putOverflow(let tree, let key, let valueLength, _):
                try checkTree(tree)
                try checkKey(key)
                guard valueLength <= UInt64(ReferenceFormat.maximumValueLength) else {
                    throw FormatViolation("value length \(valueLength)")
                }
            case .createTree(let id, let name):
                try checkTree(id)
                guard (1...ReferenceFormat.maximumTreeNameLength).contains(name.count) else {
                    throw FormatViolation("tree name length \(name.count)")
                }
                guard String(validating: name, as: UTF8.self) != nil else {
                    throw FormatViolation("a tree name that is not UTF-8")
                }
            case .dropTree(let id):
                try checkTree(id)
            }
        }

        /// The operation at the reader's position, its fields unchecked, and where its overflow
        /// reference lies (put overflow only); throws on an unknown op byte or an operation
        /// cut short.
        private static func next(_ reader: inout ByteReader) throws -> (Operation, overflowReferenceAt: Int?) {
            let code = try reader.u8()
            /// A length-prefixed byte string; the length must fit in what is left.
            func prefixedBytes() throws -> [UInt8] { try reader.bytes(try reader.varint(atMost: reader.remaining)) }
            switch code {
            case putCode:
                return (.put(tree: try reader.varint(), key: try prefixedBytes(), value: try prefixedBytes()), nil)
            case deleteCode:
                return (.delete(tree: try reader.varint(), key: try prefixedBytes()), nil)
            case putOverflowCode:
                let tree = try reader.varint()
                let key = try prefixedBytes()
                let valueLength = try reader.varint()
                let referenceAt = reader.position
                let operation = Operation.putOverflow(tree: tree, key: key, valueLength: valueLength,
                                                      frameOffset: try reader.u64())
                return (operation, referenceAt)
            case createTreeCode:
                return (.createTree(id: try reader.varint(), name: try prefixedBytes()), nil)
            case dropTreeCode:
                return (.dropTree(id: try reader.varint()), nil)
            default:
                throw FormatViolation("unknown op byte \(code) at payload offset \(reader.position - 1)")
            }
        }

        /// A place in a commit record that forging or moving frames changes.
        package enum Site: Equatable, Sendable {
            /// The op byte of an operation, at this position.
            case opCode(Int)
            /// The u64 overflow frame offset of a put overflow, at this position.
            case overflowReference(Int)
        }

        /// The op bytes and overflow references of the record in `bytes[start..<end]`, in order
        /// (positions in `bytes`). No limit is checked; the walk stops after the first operation
        /// that does not decode — its op byte is still listed — and never reads outside
        /// `start..<end`.
        package static func sites(in bytes: [UInt8], from start: Int, to end: Int) -> [Site] {
            var reader = ByteReader(bytes, from: start, to: end)
            var sites: [Site] = []
            while !reader.isAtEnd {
                sites.append(.opCode(reader.position))
                guard let (_, referenceAt) = try? next(&reader) else { break }
                if let referenceAt { sites.append(.overflowReference(referenceAt)) }
            }
            return sites
        }
    }
}
