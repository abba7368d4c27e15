import Foundation
import StrataStorage

/// Evaluates a row-local derived expression against a reader's rows (a transaction's current
/// rows at commit; a snapshot's when `check` recomputes from scratch).
struct DerivedEvaluator {
    let tx: RecordReader
    let entity: EntityDescription
    let property: String

    func overflow() -> StrataError {
        .validation(entity: entity.name, property: property, reason: "integer overflow while computing the derived value")
    }

    func value(of x: DerivedExpression, at key: RowKey) throws -> Value {
        switch x {
        case .literal(let v): return v
        case .now: return .null  // set by the engine
        case .aggregate: return .null  // never row-local
        case .path(let path):
            var k = key
            for hop in path.dropLast() {
                let e = tx.model.entities[k.entity]
                let rel = e.relationship(hop)!
                guard let r = try tx.row(k), case .int(let p) = r[rel.field!] else { return .null }
                k = RowKey(entity: rel.targetIndex, pk: UInt64(bitPattern: p))
            }
            guard let r = try tx.row(k) else { return .null }
            return r[tx.model.entities[k.entity].fieldIndex[path.last!]!]
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
            switch try value(of: a, at: key) {
            case .int(let i):
                guard i != .min else { throw overflow() }
                return .int(-i)
            case .double(let d): return .double(-d)
            case .decimal(let d): return .decimal(-d)
            default: return .null
            }
        case .arithmetic(let op, let a, let b):
            return try arithmetic(op, try value(of: a, at: key), try value(of: b, at: key))
        }
    }

    func arithmetic(_ op: DerivedExpression.ArithmeticOperator, _ a: Value, _ b: Value) throws -> Value {
        switch (a, b) {
        case (.null, _), (_, .null): return .null
        case (.int(let x), .int(let y)):
            let r: (Int64, Bool)
            switch op {
            case .add: r = x.addingReportingOverflow(y)
            case .subtract: r = x.subtractingReportingOverflow(y)
            case .multiply: r = x.multipliedReportingOverflow(by: y)
            case .divide:
                if y == 0 { return .null }
                // Integer division would lose the fraction; the declared type decides later.
                return .double(Double(x) / Double(y))
            }
            if r.1 { throw overflow() }
            return .int(r.0)
        case (.decimal, _), (_, .decimal):
            guard let x = decimal(a), let y = decimal(b) else { return .null }
            switch op {
            case .add: return .decimal(x + y)
            case .subtract: return .decimal(x - y)
            case .multiply: return .decimal(x * y)
            case .divide: return y.isZero ? .null : .decimal(x / y)
            }
        default:
            guard let x = a.doubleValue, let y = b.doubleValue else { return .null }
            switch op {
            case .add: return .double(x + y)
            case .subtract: return .double(x - y)
            case .multiply: return .double(x * y)
            case .divide: return y == 0 ? .null : .double(x / y)
            }
        }
    }

    func decimal(_ v: Value) -> Decimal? {
        switch v {
        case .decimal(let d): return d
        case .int(let i): return Decimal(i)
        case .double(let d): return Decimal(d)
        default: return nil
        }
    }
}
