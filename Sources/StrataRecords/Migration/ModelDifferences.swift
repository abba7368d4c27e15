/// The lines of two schema texts that differ, for `StrataError.modelMismatch`.
enum ModelDifferences {
    static func between(stored: [String], given: [String]) -> [String] {
        let old = Set(stored), new = Set(given)
        var out: [String] = []
        for line in stored where !new.contains(line) {
            out.append("stored, not in the given model: \(line.trimmingCharacters(in: .whitespaces))")
        }
        for line in given where !old.contains(line) {
            out.append("in the given model, not stored: \(line.trimmingCharacters(in: .whitespaces))")
        }
        if out.isEmpty { out.append("the same properties in another order") }
        return out
    }
}

import Foundation
