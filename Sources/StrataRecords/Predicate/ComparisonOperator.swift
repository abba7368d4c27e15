/// A comparison operator; the raw value is its format-string spelling.
public enum ComparisonOperator: String, Hashable, Sendable {
    /// `==`: equal values (numbers compare by value across int, double and decimal; strings
    /// are equal when canonically equivalent, as Swift's `==` says).
    case equal = "=="
    /// `!=`: unequal values.
    case notEqual = "!="
    /// `<`: less than; strings order by the Unicode scalars of their NFC forms. Values of
    /// different kinds (other than numbers), `nil` and NaN never order (a fetch rejects a
    /// comparison of kinds that cannot compare before it runs).
    case less = "<"
    /// `<=`: less than or equal.
    case lessOrEqual = "<="
    /// `>`: greater than.
    case greater = ">"
    /// `>=`: greater than or equal.
    case greaterOrEqual = ">="
    /// `IN`: equal to an element of the right side (a list, or a to-many key path).
    case `in` = "IN"
    /// `BETWEEN`: within the right side's two bounds, both included.
    case between = "BETWEEN"
    /// `BEGINSWITH`: a string that starts with the right side (whole characters, without options).
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: a string that ends with the right side (whole characters, without options).
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: a string that contains the right side (whole characters, without options).
    case contains = "CONTAINS"
    /// `LIKE`: a string that matches a wildcard pattern (`*` any run, `?` one character, `\` escapes).
    case like = "LIKE"
    /// `MATCHES`: a string that an ICU regular expression matches whole.
    case matches = "MATCHES"
    /// `CONTAINSWORDS`: the values on the left (a string attribute, or a list of them:
    /// `{title, body} CONTAINSWORDS "cafe stor*"`) hold every word of the right side, as a
    /// word index (``FullTextIndex``) splits and folds them; `stor*` stands for every word
    /// beginning `stor`. Answered through the entity's word index over those properties when
    /// it has one.
    case containsWords = "CONTAINSWORDS"
    /// `CONTAINSANYWORD`: the values on the left hold at least one word of the right side
    /// (otherwise as ``containsWords``).
    case containsAnyWord = "CONTAINSANYWORD"

    /// Whether this operator matches words (``containsWords``, ``containsAnyWord``).
    var matchesWords: Bool { self == .containsWords || self == .containsAnyWord }
}
