import Foundation
import StrataStorage

/// The checker's recomputation of derived values and of the auxiliary fields behind them.
extension RecordCheck {
    /// Every derived value of every row of `e` against its recomputation from the rows; for
    /// aggregates, the auxiliary fields too.
    func checkDerived(_ e: EntityDescription) throws {
        let rows = entities[e.index]
        for d in e.derivedAttributes {
            switch d.parsed {
            case .now:
                for (n, r) in rows.rows.enumerated() where r[d.field].isNull && !d.isOptional {
                    report("\(e.name)/\(rows.keys[n]).\(d.name) (now()) is not set")
                }
            case .aggregate(let f, let relName, let attr):
                guard let rel = e.relationship(relName) else { continue }
                let c = model.entities[rel.targetIndex]
                let source = attr.flatMap { c.fieldIndex[$0] }
                let members = try membership(rel, of: e)
                let childRows = entities[c.index].rows
                for (n, r) in rows.rows.enumerated() {
                    let positions = members[rows.keys[n]] ?? []
                    let values = source.map { s in positions.compactMap { p in childRows[p][s].isNull ? nil : childRows[p][s] } } ?? []
                    checkAggregate(e, d, f, pk: rows.keys[n], row: r, members: positions.count, values: values,
                                   kind: source.map { AggregateArithmetic.SumKind(c.fields[$0].type) })
                }
            default:
                // The engine's own evaluator, over the rows read above (a hop through a to-one
                // is a dictionary lookup, not a tree descent and a decode).
                let evaluator = DerivedEvaluator(tx: rowReader, entity: e, property: d.name)
                for (n, r) in rows.rows.enumerated() {
                    let pk = rows.keys[n]
                    let expected: StoredValue
                    do {
                        expected = try evaluator.value(of: d.parsed, at: RowKey(entity: e.index, pk: pk), as: d.type)
                    } catch StrataError.validation(_, _, let reason) {
                        report("\(e.name)/\(pk).\(d.name) = \(r[d.field]), but recomputing it from scratch fails: \(reason)")
                        continue
                    } catch {
                        report("\(e.name)/\(pk).\(d.name) = \(r[d.field]), but recomputing it from scratch fails: \(error)")
                        continue
                    }
                    if !r[d.field].isIdentical(to: expected) {
                        report("\(e.name)/\(pk).\(d.name) = \(r[d.field]), recomputed from scratch: \(expected)")
                    }
                }
            }
        }
    }

    /// One parent's aggregate `d` over its members (`values`: their non-nil values of the
    /// aggregated attribute, of sum kind `kind`), and the auxiliary fields behind it.
    func checkAggregate(_ e: EntityDescription, _ d: ResolvedDerivedAttribute, _ f: AggregateFunction, pk: UInt64, row r: [StoredValue],
                        members: Int, values: [StoredValue], kind: AggregateArithmetic.SumKind?) {
        let label = "\(e.name)/\(pk).\(d.name)"
        let stored = r[d.field]
        func expect(_ expected: StoredValue, from source: String = "recomputed from scratch") {
            if !stored.isIdentical(to: expected) { report("\(label) = \(stored), \(source): \(expected)") }
        }
        do {
            switch f {
            case .count:
                expect(try DerivedValues.convert(.int(Int64(members)), to: d.type))
            case .min, .max:
                expect(try DerivedValues.convert(AggregateArithmetic.extreme(values, max: f == .max), to: d.type))
            case .sum, .avg:
                guard let kind else { return }
                let aux = d.auxiliaryFields
                // The running sum in the values' kind: the attribute itself when it is of that
                // kind and keeps no auxiliary sum, else the first auxiliary field.
                let running: StoredValue
                if kind == .double {
                    let sumField = aux[0], compensationField = aux[f == .avg ? 2 : 1]
                    guard case .double(let s) = r[sumField], case .double(let c) = r[compensationField] else {
                        report("\(label): its running sum has no value (auxiliary fields \(e.fields[sumField].name), \(e.fields[compensationField].name))")
                        return
                    }
                    let sumNames = "\(e.fields[sumField].name) + \(e.fields[compensationField].name)"
                    guard s.isFinite, c.isFinite, (s + c).isFinite else {
                        report("\(label): its running sum (\(sumNames)) is not finite")
                        return
                    }
                    let total = s + c
                    let scratch = try AggregateArithmetic.sum(values)?.total ?? .double(0)
                    var magnitude = 0.0
                    for v in values { magnitude += abs(try AggregateArithmetic.double(v)) }
                    if case .double(let x) = scratch, !RunningSumTolerance.agree(sum: s, compensation: c, scratch: x, magnitude: magnitude) {
                        report("\(label): its running sum (\(sumNames)) is \(total), recomputed from scratch: \(x)")
                    }
                    running = .double(total)
                } else {
                    let scratch = try AggregateArithmetic.sum(values)?.total ?? (kind == .decimal ? .decimal(0) : .int(0))
                    if let sumField = aux.first, r[sumField] != scratch {
                        report("\(label): its running sum (\(e.fields[sumField].name)) is \(r[sumField]), recomputed from scratch: \(scratch)")
                    }
                    running = scratch
                }
                // A double sum's value is what its running sum gives, exactly (the running sum
                // was compared with the values within the tolerance above).
                let source = kind == .double ? "its running sum gives" : "recomputed from scratch"
                if f == .sum {
                    expect(try DerivedValues.convert(running, to: d.type), from: source)
                    return
                }
                let countField = aux[1]
                guard case .int(let count) = r[countField] else {
                    report("\(label): its running count (\(e.fields[countField].name)) has no value")
                    return
                }
                if count != Int64(values.count) {
                    report("\(label): its running count (\(e.fields[countField].name)) is \(count), recomputed from scratch: \(values.count)")
                }
                expect(try AggregateArithmetic.mean(sum: running, count: Int64(values.count), as: d.type), from: source)
            }
        } catch let overflow as AggregateArithmetic.Overflow {
            report("\(label) = \(stored), but recomputing it from scratch fails: \(overflow.reason) in \(d.expression)")
        } catch {
            report("\(label) = \(stored), but recomputing it from scratch fails: \(error)")
        }
    }
}
