import Foundation
import StrataStorage

/// One comparison compiled: operands turned into sources, the constant side prepared once.
/// A class: a scan evaluates it once per row, and a struct of this size was copied (its
/// references retained and released) at every evaluation.
final class CompiledComparison: Sendable {
    private enum Right: Sendable {
        case prepared(PreparedRight)
        case dynamic(OperandSource)
    }

    private let lhs: OperandSource
    private let quantifier: Quantifier
    private let op: ComparisonOperator
    private let mode: TextMode
    /// `MATCHES[c]` is ICU's case-insensitive flag: folding the pattern's text would also
    /// fold escapes such as `\D` into `\d`.
    private let regexCaseInsensitive: Bool
    private let rhs: Right
    /// The words of a `CONTAINSWORDS`/`CONTAINSANYWORD` comparison (nil for other operators,
    /// and for a right side that is not a string: such a comparison is false).
    private let words: WordQuery?
    /// Whether both sides read constants and the subject's own fields alone.
    let readsOnlyFields: Bool
    /// The comparison decided on the field's stored bytes, when the left side is a field, the
    /// right a constant, and their kinds pair (``StoredComparison``).
    let stored: StoredComparison?

    init(_ comparison: Comparison, in entity: EntityDescription? = nil) throws {
        lhs = try OperandSource(comparison.lhs, in: entity)
        if comparison.op.matchesWords, case .constant(.string(let query)) = comparison.rhs {
            words = try WordQuery(query, match: comparison.op == .containsWords ? .allWords : .anyWord)
        } else {
            words = nil
        }
        quantifier = comparison.quantifier
        op = comparison.op
        let options = comparison.options
        if op == .matches {
            // Only diacritics are folded on both sides; case is the regex engine's job.
            var textOptions = options
            textOptions.remove(.caseInsensitive)
            mode = TextMode(textOptions)
            regexCaseInsensitive = options.contains(.caseInsensitive) && !options.contains(.normalized)
        } else {
            mode = TextMode(options)
            regexCaseInsensitive = false
        }
        let source = try OperandSource(comparison.rhs, in: entity)
        if op == .between {
            guard case .list(let bounds) = source, bounds.count == 2 else {
                throw StrataError.invalidFetch("BETWEEN needs a list of two bounds: \(comparison)")
            }
        }
        readsOnlyFields = lhs.readsOnlyFields && source.readsOnlyFields
        if case .field(let field) = lhs, let entity, case .one(let constant)? = source.constantValues {
            stored = StoredComparison(field: field, type: entity.fields[field].type, op: op,
                                      quantifier: quantifier, constant: constant)
        } else {
            stored = nil
        }
        if let values = source.constantValues {
            let caseInsensitive = regexCaseInsensitive
            rhs = .prepared(try Self.prepare(values, op: op, mode: mode) {
                try RegexPattern.compile($0, caseInsensitive: caseInsensitive)
            })
        } else {
            rhs = .dynamic(source)
        }
    }

    /// `regex` compiles a `MATCHES` pattern: directly for a constant, through the
    /// evaluator's cache for a pattern read from the row.
    private static func prepare(_ values: KeyPathValues, op: ComparisonOperator, mode: TextMode,
                                regex: (String) throws -> NSRegularExpression) throws -> PreparedRight {
        func operand(_ value: StoredValue) throws -> PreparedOperand {
            let prepared = PreparedValue(value, mode: mode)
            var pattern: PreparedOperand.Pattern?
            if let text = prepared.text {
                if op == .like {
                    pattern = .like(LikePattern(text))
                } else if op == .matches {
                    pattern = .regex(try regex(text))
                }
            }
            return PreparedOperand(value: prepared, pattern: pattern)
        }
        switch values {
        case .one(let value):
            return .one(try operand(value))
        case .many(let elements):
            let operands = try elements.map(operand)
            return .many(operands, op == .in ? MembershipIndex(operands) : nil)
        }
    }

    func evaluate<Subject: PredicateSubject>(_ subject: Subject, cache: inout RegexCache) throws -> Bool {
        if Subject.holdsStoredRow, let stored,
           let answer = stored.evaluate(try subject.storedValue(atField: stored.field)) {
            return answer
        }
        if op.matchesWords {
            guard let words else { return false }
            var texts: [String] = []
            switch try lhs.resolve(subject) {
            case .one(let value):
                if case .string(let text) = value { texts.append(text) }
            case .many(let values):
                for case .string(let text) in values { texts.append(text) }
            }
            return words.matches(texts, folding: WordFolding())
        }
        let right: PreparedRight
        switch rhs {
        case .prepared(let prepared):
            right = prepared
        case .dynamic(let source):
            right = try Self.prepare(try source.resolve(subject), op: op, mode: mode) {
                try cache.regex($0, caseInsensitive: regexCaseInsensitive)
            }
        }
        switch try lhs.resolve(subject) {
        case .one(let value):
            // A single value is a collection of one for ALL and NONE.
            let result = test(value, against: right)
            return quantifier == .none ? !result : result
        case .many(let values):
            switch quantifier {
            case .direct, .any: return values.contains { test($0, against: right) }
            case .all: return values.allSatisfy { test($0, against: right) }
            case .none: return !values.contains { test($0, against: right) }
            }
        }
    }

    /// One value of the left side against the right side. A right side of many values (a
    /// list, or a to-many path) matches when one of them does, except for `IN` and
    /// `BETWEEN`, which take the collection as a whole.
    private func test(_ value: StoredValue, against right: PreparedRight) -> Bool {
        let left = PreparedValue(value, mode: mode)
        switch op {
        case .equal:
            return right.contains { ValueSemantics.equal(left, $0.value, mode: mode) }
        case .notEqual:
            return right.contains { !ValueSemantics.equal(left, $0.value, mode: mode) }
        case .less:
            return right.contains { ValueSemantics.order(left, $0.value, mode: mode) == -1 }
        case .lessOrEqual:
            return right.contains { ValueSemantics.order(left, $0.value, mode: mode).map { $0 <= 0 } ?? false }
        case .greater:
            return right.contains { ValueSemantics.order(left, $0.value, mode: mode) == 1 }
        case .greaterOrEqual:
            return right.contains { ValueSemantics.order(left, $0.value, mode: mode).map { $0 >= 0 } ?? false }
        case .in:
            switch right {
            case .many(let operands, let index):
                if let answer = index?.contains(left) { return answer }
                return operands.contains { ValueSemantics.equal(left, $0.value, mode: mode) }
            case .one(let operand):
                // `"ab" IN name` is substring containment, as in NSPredicate; any other single
                // value is a collection of one.
                if let leftText = left.text, let rightText = operand.value.text {
                    return mode.contains(rightText, leftText)
                }
                return ValueSemantics.equal(left, operand.value, mode: mode)
            }
        case .between:
            guard case .many(let bounds, _) = right, bounds.count == 2,
                  let low = ValueSemantics.order(left, bounds[0].value, mode: mode), low >= 0,
                  let high = ValueSemantics.order(left, bounds[1].value, mode: mode), high <= 0
            else { return false }
            return true
        case .beginsWith:
            guard let text = left.text else { return false }
            return right.contains { $0.value.text.map { mode.hasPrefix(text, $0) } ?? false }
        case .endsWith:
            guard let text = left.text else { return false }
            return right.contains { $0.value.text.map { mode.hasSuffix(text, $0) } ?? false }
        case .contains:
            guard let text = left.text else { return false }
            return right.contains { $0.value.text.map { mode.contains(text, $0) } ?? false }
        case .like:
            guard let text = left.text else { return false }
            return right.contains {
                if case .like(let pattern)? = $0.pattern { return pattern.matches(text) }
                return false
            }
        case .matches:
            guard let text = left.text else { return false }
            return right.contains {
                if case .regex(let regex)? = $0.pattern { return RegexPattern.matches(regex, text) }
                return false
            }
        case .containsWords, .containsAnyWord:
            // Word comparisons take all the left side's values at once (``evaluate``).
            return false
        }
    }
}
