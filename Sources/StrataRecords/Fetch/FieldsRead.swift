/// Which fields of a row a fetch reads from the row itself: the first component of every key
/// path its predicate compares and its sort orders by (what lies beyond a relationship is read
/// from the target's own row). A scan decodes only those (``RowCodec/decode(_:fields:needed:)``).
extension EntityDescription {
    /// Parallel to ``fields``; nil when every field is read, or when the request names
    /// something this cannot place (`SELF`, a name that is neither a field nor a relationship):
    /// the scan then decodes whole rows.
    func fieldsRead(by predicate: FetchPredicate?, sortedBy sorts: [FetchSortDescriptor]) -> [Bool]? {
        var needed = [Bool](repeating: false, count: fields.count)
        func mark(_ path: [String]) -> Bool {
            guard let first = path.first else { return false }
            if let field = fieldIndex[first] {
                needed[field] = true
                return true
            }
            return relationship(first) != nil
        }
        func visit(_ expression: FetchExpression) -> Bool {
            switch expression {
            case .constant, .variable: return true
            case .keyPath(let path), .aggregate(_, let path): return mark(path)
            case .list(let items): return items.allSatisfy(visit)
            }
        }
        func visit(_ predicate: FetchPredicate) -> Bool {
            switch predicate {
            case .constant: return true
            case .comparison(let comparison): return visit(comparison.lhs) && visit(comparison.rhs)
            case .and(let terms), .or(let terms): return terms.allSatisfy(visit)
            case .not(let operand): return visit(operand)
            }
        }
        if let predicate, !visit(predicate) { return nil }
        for sort in sorts where !mark(sort.keyPath.split(separator: ".").map(String.init)) { return nil }
        return needed.allSatisfy { $0 } ? nil : needed
    }
}
