import Foundation
import StrataStorage
import Testing
@testable import StrataRecords


/// An object for evaluation tests: attributes, to-one and to-many relationships by name.
/// A class, because relationships form a graph.
final class TestObject: PredicateSubject {
    enum Field {
        case value(StoredValue)
        case toOne(TestObject?)
        case toMany([TestObject])
    }

    let id: Int64
    var fields: [String: Field]

    init(id: Int64, _ fields: [String: Field] = [:]) {
        self.id = id
        self.fields = fields
    }

    struct UnknownKey: Error { let name: String }

    /// Walks the path as the record layer will: through to-ones (a nil one ends in nil),
    /// collecting many values once a to-many is crossed; relationships at the end yield ids.
    /// Never asked: only a predicate compiled for a model entity binds fields, and these
    /// subjects are evaluated by predicates compiled without one.
    func value(atField field: Int) throws -> StoredValue { .null }

    func values(at keyPath: [String]) throws -> KeyPathValues {
        if keyPath.isEmpty { return .one(.int(id)) }
        var current: [TestObject?] = [self]
        var many = false
        for (k, name) in keyPath.enumerated() {
            let last = k == keyPath.count - 1
            var next: [TestObject?] = []
            var values: [StoredValue] = []
            for object in current {
                guard let object else {
                    if !many { return .one(.null) }
                    continue
                }
                switch object.fields[name] {
                case .value(let v)?:
                    guard last else { throw UnknownKey(name: name) }
                    values.append(v)
                case .toOne(let target)?:
                    if last { values.append(target.map { .int($0.id) } ?? .null) } else { next.append(target) }
                case .toMany(let targets)?:
                    many = true
                    if last { values += targets.map { .int($0.id) } } else { next += targets }
                case nil:
                    throw UnknownKey(name: name)
                }
            }
            if last { return many ? .many(values) : .one(values.first ?? .null) }
            current = next
        }
        return .one(.null)
    }
}

/// The message of the `invalidFetch` error `body` throws, or nil when it throws none.
func invalidFetchMessage(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch StrataError.invalidFetch(let message) {
        return message
    } catch {
        return "unexpected error: \(error)"
    }
}

/// Shorthands for expected trees.
func kp(_ path: String) -> FetchExpression { .keyPath(path.split(separator: ".").map(String.init)) }
func c(_ v: StoredValue) -> FetchExpression { .constant(v) }
func cmp(_ lhs: FetchExpression, _ op: ComparisonOperator, _ rhs: FetchExpression,
         _ quantifier: Quantifier = .direct, _ options: StringOptions = []) -> FetchPredicate {
    .comparison(Comparison(lhs, op, rhs, quantifier: quantifier, options: options))
}
