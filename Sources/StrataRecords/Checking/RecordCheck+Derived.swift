import Foundation
import StrataStorage

/// The checker's recomputation of derived values and of the auxiliary fields behind them.
extension RecordCheck {
    /// Every derived value of every row of `entity` against its recomputation from the rows; for
    /// aggregates, the auxiliary fields too.
    func checkDerived(_ entity: EntityDescription) throws {
        let rows = entities[entity.index]
        for derived in entity.derivedAttributes {
            switch derived.parsed {
            case .now:
                for (i, row) in rows.rows.enumerated() where row[derived.field].isNull && !derived.isOptional {
                    report("\(entity.name)/\(rows.keys[i]).\(derived.name) (now()) is not set")
                }
            case .aggregate(let function, let relName, let attr):
                guard let rel = entity.relationship(relName) else { continue }
                let childEntity = model.entities[rel.targetIndex]
                let source = attr.flatMap { childEntity.fieldIndex[$0] }
                let members = try membership(rel, of: entity)
                let childRows = entities[childEntity.index].rows
                for (i, row) in rows.rows.enumerated() {
                    let positions = members[rows.keys[i]] ?? []
                    let values = source.map { sourceField in
                        positions.compactMap { position in
                            childRows[position][sourceField].isNull ? nil : childRows[position][sourceField]
                        }
                    } ?? []
                    checkAggregate(entity, derived, function, pk: rows.keys[i], row: row, members: positions.count,
                                   values: values,
                                   kind: source.map { AggregateArithmetic.SumKind(childEntity.fields[$0].type) })
                }
            default:
                // The engine's own evaluator, over the rows read above (a hop through a to-one
                // is a dictionary lookup, not a tree descent and a decode).
                let evaluator = DerivedEvaluator(tx: rowReader, entity: entity, property: derived.name)
                for (i, row) in rows.rows.enumerated() {
                    let pk = rows.keys[i]
                    let expected: StoredValue
                    do {
                        expected = try evaluator.value(of: derived.parsed, at: RowKey(entity: entity.index, pk: pk),
                                                       as: derived.type)
                    } catch StrataError.validation(_, _, let reason) {
                        report("\(entity.name)/\(pk).\(derived.name) = \(row[derived.field]), "
                               + "but recomputing it from scratch fails: \(reason)")
                        continue
                    } catch {
                        report("\(entity.name)/\(pk).\(derived.name) = \(row[derived.field]), "
                               + "but recomputing it from scratch fails: \(error)")
                        continue
                    }
                    if !row[derived.field].isIdentical(to: expected) {
                        report("\(entity.name)/\(pk).\(derived.name) = \(row[derived.field]), "
                               + "recomputed from scratch: \(expected)")
                    }
                }
            }
        }
    }

    /// One parent's aggregate `derived` over its members (`values`: their non-nil values of the
    /// aggregated attribute, of sum kind `kind`), and the auxiliary fields behind it.
    func checkAggregate(_ entity: EntityDescription, _ derived: ResolvedDerivedAttribute, _ function: AggregateFunction,
                        pk: UInt64, row: [StoredValue],
                        members: Int, values: [StoredValue], kind: AggregateArithmetic.SumKind?) {
        let label = "\(entity.name)/\(pk).\(derived.name)"
        let stored = row[derived.field]
        func expect(_ expected: StoredValue, from source: String = "recomputed from scratch") {
            if !stored.isIdentical(to: expected) { report("\(label) = \(stored), \(source): \(expected)") }
        }
        do {
            switch function {
            case .count:
                expect(try DerivedValues.convert(.int(Int64(members)), to: derived.type))
            case .min, .max:
                let extreme = AggregateArithmetic.extreme(values, max: function == .max)
                expect(try DerivedValues.convert(extreme, to: derived.type))
            case .sum, .avg:
                guard let kind else { return }
                let aux = derived.auxiliaryFields
                // The running sum in the values' kind: the attribute itself when it is of that
                // kind and keeps no auxiliary sum, else the first auxiliary field.
                let running: StoredValue
                if kind == .double {
                    let sumField = aux[0], compensationField = aux[function == .avg ? 2 : 1]
                    guard case .double(let sum) = row[sumField],
                          case .double(let compensation) = row[compensationField] else {
                        report("\(label): its running sum has no value (auxiliary fields "
                               + "\(entity.fields[sumField].name), \(entity.fields[compensationField].name))")
                        return
                    }
                    let sumNames = "\(entity.fields[sumField].name) + \(entity.fields[compensationField].name)"
                    guard sum.isFinite, compensation.isFinite, (sum + compensation).isFinite else {
                        report("\(label): its running sum (\(sumNames)) is not finite")
                        return
                    }
                    let total = sum + compensation
                    let scratch = try AggregateArithmetic.sum(values)?.total ?? .double(0)
                    var magnitude = 0.0
                    for value in values { magnitude += abs(try AggregateArithmetic.double(value)) }
                    if case .double(let scratchTotal) = scratch,
                       !RunningSumTolerance.agree(sum: sum, compensation: compensation, scratch: scratchTotal,
                                                  magnitude: magnitude) {
                        report("\(label): its running sum (\(sumNames)) is \(total), "
                               + "recomputed from scratch: \(scratchTotal)")
                    }
                    running = .double(total)
                } else {
                    let scratch = try AggregateArithmetic.sum(values)?.total
                        ?? (kind == .decimal ? .decimal(0) : .int(0))
                    if let sumField = aux.first, row[sumField] != scratch {
                        report("\(label): its running sum (\(entity.fields[sumField].name)) is \(row[sumField]), "
                               + "recomputed from scratch: \(scratch)")
                    }
                    running = scratch
                }
                // A double sum's value is what its running sum gives, exactly (the running sum
                // was compared with the values within the tolerance above).
                let source = kind == .double ? "its running sum gives" : "recomputed from scratch"
                if function == .sum {
                    expect(try DerivedValues.convert(running, to: derived.type), from: source)
                    return
                }
                let countField = aux[1]
                guard case .int(let count) = row[countField] else {
                    report("\(label): its running count (\(entity.fields[countField].name)) has no value")
                    return
                }
                if count != Int64(values.count) {
                    report("\(label): its running count (\(entity.fields[countField].name)) is \(count), "
                           + "recomputed from scratch: \(values.count)")
                }
                let mean = try AggregateArithmetic.mean(sum: running, count: Int64(values.count), as: derived.type)
                expect(mean, from: source)
            }
        } catch let overflow as AggregateArithmetic.Overflow {
            report("\(label) = \(stored), but recomputing it from scratch fails: "
                   + "\(overflow.reason) in \(derived.expression)")
        } catch {
            report("\(label) = \(stored), but recomputing it from scratch fails: \(error)")
        }
    }
}

/// Whether a derived value agrees with a recomputation by other means (the tests' references,
/// SQLite): exactly, except the sums and averages of doubles, which may differ in the last
/// bits (by at most 1e-9 of the magnitude).
enum DerivedComparison {
    static func agree(_ lhs: StoredValue, _ rhs: StoredValue, tolerant: Bool = true) -> Bool {
        if lhs == rhs { return true }
        if tolerant, case .double(let left) = lhs, case .double(let right) = rhs {
            return abs(left - right) <= 1e-9 * max(abs(left), abs(right), 1e-300) || abs(left - right) < 1e-12
        }
        if tolerant, case .decimal(let left) = lhs, case .decimal(let right) = rhs,
           let leftDouble = ExactConversion.nearestDouble(left),
           let rightDouble = ExactConversion.nearestDouble(right) {
            return abs(leftDouble - rightDouble) <= 1e-9 * max(abs(leftDouble), abs(rightDouble), 1e-300)
                || abs(leftDouble - rightDouble) < 1e-12
        }
        return false
    }

    /// Whether `derived` is a sum or average over doubles: the one inexact aggregate.
    static func isInexact(_ derived: ResolvedDerivedAttribute) -> Bool {
        guard case .aggregate(let function, _, _) = derived.parsed, function == .sum || function == .avg else {
            return false
        }
        return derived.aggregateSourceType == .double
    }
}

/// How far a double running sum (sum + compensation, kept in auxiliary fields) may lie from
/// the compensated sum of the same values from scratch: the tolerance of docs/decisions.md
/// ("Aggregate arithmetic"), 1e-9 of the magnitude, or 1e-12 absolutely.
///
/// Both are Neumaier sums, the running one in another order and with the values that left
/// subtracted. Each step's rounding error is kept in the compensation, but the compensation's
/// own additions round too, by a few units of roundoff of the largest values the parent ever
/// held: a parent that held 1e15 and keeps 1e-15 may be off by 1e-18 (measured by
/// `RecordCheckerTests`), far more than any bound relative to what it holds now. The magnitude
/// is the largest of the values' total magnitude, the running sum and its compensation (a
/// damaged field far from the truth stays far outside a bound taken relative to itself); the
/// absolute floor covers the residue of values that left. Damage below the bound is also
/// below what the derived value's comparisons could ever notice.
enum RunningSumTolerance {
    static let relative = 1e-9
    static let absolute = 1e-12

    static func agree(sum: Double, compensation: Double, scratch: Double, magnitude: Double) -> Bool {
        let difference = abs((sum + compensation) - scratch)
        return difference < absolute
            || difference <= relative * max(magnitude, abs(sum), abs(compensation), abs(scratch))
    }
}
