import StrataRecords

/// One object a word-index search found (``ModelContext/search(_:matching:in:match:limit:)``).
public struct SearchResult<T: ManagedObject> {
    /// The object, registered in the context that searched.
    public let object: T
    /// Its score: higher is a better match, comparable within one search only (FORMAT.md §12,
    /// "Word indexes").
    public let score: Double
}

extension ModelContext {
    /// The objects of `type` whose word index (``ManagedObject/fullTextIndexes``) holds all (or
    /// any) of the words of `query`, best first: words folded as `canonical:` folds them, and
    /// `word*` for every word that begins so (``TextSearch``). `properties` names the index's
    /// properties when the class has more than one. Unsaved changes are searched too (as a fetch
    /// includes them); objects deleted in the context are not returned.
    ///
    /// ```swift
    /// let hits = try context.search(Note.self, matching: "cafe stor*")
    /// ```
    ///
    /// Throws `invalidFetch` for a class without such a word index or a query without a word.
    public func search<T: ManagedObject>(_ type: T.Type, matching query: String, in properties: [PartialKeyPath<T>]? = nil,
                                         match: TextSearch.Match = .allWords, limit: Int? = nil) throws -> [SearchResult<T>] {
        try container.whileOpen("search") {
            if let limit, limit < 0 { throw StrataError.invalidFetch("a negative search limit (\(limit))") }
            processPendingMerges()
            guard let binding = container.binding(of: EntitySchema.of(type)) else {
                throw StrataError.misuse("\(type) is not one of the container's model classes")
            }
            let names = properties.map { $0.map { KeyPathNames.names(of: $0).joined(separator: ".") } }
            let search = TextSearch(binding.name, matching: query, in: names, match: match, limit: nil)
            var hits: [(raw: Int64, score: Double)] = []
            if hasChanges && !pinned {
                hits = try searchWithPendingChanges(search, binding)
            } else {
                hits = try reader().search(search).compactMap { hit in
                    Int64(exactly: hit.id.primaryKey).map { ($0, hit.score) }
                }
            }
            var results: [SearchResult<T>] = []
            for hit in hits {
                if let limit, results.count >= limit { break }
                guard let object = object(raw: hit.raw, binding: binding) as? T, !object.isDeleted else { continue }
                results.append(SearchResult(object: object, score: hit.score))
            }
            return results
        }
    }

    /// The search in a write transaction holding the unsaved changes, rolled back after.
    private func searchWithPendingChanges(_ search: TextSearch, _ binding: EntityBinding) throws
        -> [(raw: Int64, score: Double)] {
        try withPendingChanges(binding) { tx, raw in
            try tx.search(search).compactMap { hit in raw(hit.id.primaryKey).map { ($0, hit.score) } }
        }
    }
}
