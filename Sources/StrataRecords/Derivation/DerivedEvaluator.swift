import Foundation
import StrataStorage

/// Evaluates a row-local derived expression against a reader's rows (a transaction's current
/// rows when it settles; a snapshot's when `checkRecords` recomputes from scratch). Key paths
/// are walked by ``RowSubject``, the arithmetic is ``DerivedValues``'.
struct DerivedEvaluator {
    let tx: RecordReader
    let entity: EntityDescription
    let property: String

    /// The validation error an overflow becomes: it names the entity and the attribute.
    func error(_ overflow: AggregateArithmetic.Overflow) -> StrataError {
        .validation(entity: entity.name, property: property, reason: "\(overflow.reason) while computing the derived value")
    }

    /// The expression's value for the row `key`, converted to `type`.
    func value(of x: DerivedExpression, at key: RowKey, as type: AttributeType) throws -> StoredValue {
        let v = try value(of: x, at: key)
        do { return try DerivedValues.convert(v, to: type) } catch { throw self.error(error) }
    }

    func value(of x: DerivedExpression, at key: RowKey) throws -> StoredValue {
        switch x {
        case .literal(let v): return v
        case .now: return .null  // set by the engine
        case .aggregate: return .null  // never row-local
        case .path(let path):
            guard let r = try tx.row(key) else { return .null }
            guard case .one(let v) = try RowSubject(reader: tx, key: key, row: r).values(at: path) else { return .null }
            return v
        case .lowercase(let a):
            guard case .string(let s) = try value(of: a, at: key) else { return .null }
            return .string(TextFolding.lowercase(s))
        case .uppercase(let a):
            guard case .string(let s) = try value(of: a, at: key) else { return .null }
            return .string(TextFolding.uppercase(s))
        case .canonical(let a):
            guard case .string(let s) = try value(of: a, at: key) else { return .null }
            return .string(TextFolding.canonical(s))
        case .negate(let a):
            let v = try value(of: a, at: key)
            do { return try DerivedValues.negate(v) } catch { throw self.error(error) }
        case .arithmetic(let op, let a, let b):
            let x = try value(of: a, at: key), y = try value(of: b, at: key)
            do { return try DerivedValues.arithmetic(op, x, y) } catch { throw self.error(error) }
        }
    }
}
