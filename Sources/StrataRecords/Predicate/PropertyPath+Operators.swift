// The typed builder's operators and methods: each makes one `Comparison` with the property
// path on the left, so a built predicate equals the one its format string parses to.

extension PropertyPath {
    /// The general form behind the operators: `self op rhs`, with string options.
    public func compared(_ op: ComparisonOperator, to rhs: some PredicateArgument,
                         options: StringOptions = []) -> FetchPredicate {
        .comparison(Comparison(expression, op, rhs.predicateExpression, quantifier: quantifier, options: options))
    }

    /// `key == value`.
    public static func == (lhs: PropertyPath, rhs: some PredicateArgument) -> FetchPredicate {
        lhs.compared(.equal, to: rhs)
    }
    /// `key != value`.
    public static func != (lhs: PropertyPath, rhs: some PredicateArgument) -> FetchPredicate {
        lhs.compared(.notEqual, to: rhs)
    }
    /// `key < value`.
    public static func < (lhs: PropertyPath, rhs: some PredicateArgument) -> FetchPredicate {
        lhs.compared(.less, to: rhs)
    }
    /// `key <= value`.
    public static func <= (lhs: PropertyPath, rhs: some PredicateArgument) -> FetchPredicate {
        lhs.compared(.lessOrEqual, to: rhs)
    }
    /// `key > value`.
    public static func > (lhs: PropertyPath, rhs: some PredicateArgument) -> FetchPredicate {
        lhs.compared(.greater, to: rhs)
    }
    /// `key >= value`.
    public static func >= (lhs: PropertyPath, rhs: some PredicateArgument) -> FetchPredicate {
        lhs.compared(.greaterOrEqual, to: rhs)
    }

    /// `key == nil`: the value is absent (or a to-one on the way is nil).
    public static func == (lhs: PropertyPath, rhs: _OptionalNilComparisonType) -> FetchPredicate {
        lhs.compared(.equal, to: StoredValue.null)
    }

    /// `key != nil`: the value is present.
    public static func != (lhs: PropertyPath, rhs: _OptionalNilComparisonType) -> FetchPredicate {
        lhs.compared(.notEqual, to: StoredValue.null)
    }

    /// `key ==[options] value`, for case- or diacritic-insensitive equality.
    public func equals(_ value: some PredicateArgument, options: StringOptions) -> FetchPredicate {
        compared(.equal, to: value, options: options)
    }

    /// `key BEGINSWITH[options] prefix`.
    public func beginsWith(_ prefix: some PredicateArgument, options: StringOptions = []) -> FetchPredicate {
        compared(.beginsWith, to: prefix, options: options)
    }

    /// `key ENDSWITH[options] suffix`.
    public func endsWith(_ suffix: some PredicateArgument, options: StringOptions = []) -> FetchPredicate {
        compared(.endsWith, to: suffix, options: options)
    }

    /// `key CONTAINS[options] substring` (string containment, not collection membership).
    public func contains(_ substring: some PredicateArgument, options: StringOptions = []) -> FetchPredicate {
        compared(.contains, to: substring, options: options)
    }

    /// `key LIKE[options] pattern`, where `*` matches any run of characters, `?` one
    /// character, and `\` makes the next character literal.
    public func like(_ pattern: some PredicateArgument, options: StringOptions = []) -> FetchPredicate {
        compared(.like, to: pattern, options: options)
    }

    /// `key MATCHES[options] regex`: the whole value matches the ICU regular expression.
    public func matches(_ regex: some PredicateArgument, options: StringOptions = []) -> FetchPredicate {
        compared(.matches, to: regex, options: options)
    }

    /// `key IN {values}`: the value equals one of `values`.
    public func `in`(_ values: [any PredicateArgument], options: StringOptions = []) -> FetchPredicate {
        .comparison(Comparison(expression, .in, .list(values.map(\.predicateExpression)),
                               quantifier: quantifier, options: options))
    }

    /// `key IN other`: the value is among the values at another (to-many) key path.
    public func `in`(_ other: PropertyPath, options: StringOptions = []) -> FetchPredicate {
        compared(.in, to: other, options: options)
    }

    /// `key BETWEEN {lower, upper}`, both bounds included.
    public func between(_ lower: some PredicateArgument, _ upper: some PredicateArgument) -> FetchPredicate {
        .comparison(Comparison(expression, .between, .list([lower.predicateExpression, upper.predicateExpression]),
                               quantifier: quantifier))
    }

    /// `key CONTAINSWORDS query`: the string holds every word of `query` (Unicode words,
    /// folded as `canonical:` folds; `stor*` stands for every word beginning `stor`), answered
    /// through a word index (``FullTextIndex``) over the attribute when there is one.
    public func containsWords(_ query: some PredicateArgument) -> FetchPredicate {
        compared(.containsWords, to: query)
    }

    /// `key CONTAINSANYWORD query`: the string holds at least one word of `query`.
    public func containsAnyWord(_ query: some PredicateArgument) -> FetchPredicate {
        compared(.containsAnyWord, to: query)
    }
}

extension FetchPredicate {
    /// `{a, b} CONTAINSWORDS query` (or `CONTAINSANYWORD` for `.anyWord`): the attributes'
    /// values together hold every word of `query` (or one), each word in any of them, as a
    /// word index over them (``FullTextIndex``) answers it.
    ///
    ///     FetchPredicate.words(of: [PropertyPath("title"), PropertyPath("body")], matching: "cafe stor*")
    public static func words(of properties: [PropertyPath], matching query: some PredicateArgument,
                             match: TextSearch.Match = .allWords) -> FetchPredicate {
        let lhs: FetchExpression = properties.count == 1
            ? properties[0].predicateExpression : .list(properties.map(\.predicateExpression))
        return .comparison(Comparison(lhs, match == .allWords ? .containsWords : .containsAnyWord,
                                      query.predicateExpression))
    }
}
