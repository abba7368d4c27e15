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
        .validation(entity: entity.name, property: property,
                    reason: "\(overflow.reason) while computing the derived value")
    }

    /// The expression's value for the row `key`, converted to `type`.
    func value(of expression: DerivedExpression, at key: RowKey, as type: AttributeType) throws -> StoredValue {
        let computed = try value(of: expression, at: key)
        do { return try DerivedValues.convert(computed, to: type) } catch { throw self.error(error) }
    }

    func value(of expression: DerivedExpression, at key: RowKey) throws -> StoredValue {
        switch expression {
        case .literal(let literal): return literal
        case .now: return .null  // set by the engine
        case .aggregate: return .null  // never row-local
        case .path(let path):
            guard let row = try tx.row(key) else { return .null }
            let subject = RowSubject(reader: tx, key: key, row: row)
            guard case .one(let found) = try subject.values(at: path) else { return .null }
            return found
        case .lowercase(let operand):
            guard case .string(let string) = try value(of: operand, at: key) else { return .null }
            return .string(TextFolding.lowercase(string))
        case .uppercase(let operand):
            guard case .string(let string) = try value(of: operand, at: key) else { return .null }
            return .string(TextFolding.uppercase(string))
        case .canonical(let operand):
            guard case .string(let string) = try value(of: operand, at: key) else { return .null }
            return .string(TextFolding.canonical(string))
        case .negate(let operand):
            let operandValue = try value(of: operand, at: key)
            do { return try DerivedValues.negate(operandValue) } catch { throw self.error(error) }
        case .arithmetic(let op, let lhs, let rhs):
            let lhsValue = try value(of: lhs, at: key), rhsValue = try value(of: rhs, at: key)
            do { return try DerivedValues.arithmetic(op, lhsValue, rhsValue) } catch { throw self.error(error) }
        }
    }
}
