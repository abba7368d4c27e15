/// Bytes that break a rule of FORMAT.md, with the rule and where.
package struct FormatViolation: Error, CustomStringConvertible, Sendable {
    package let description: String

    /// A violation described by `description` (what was found, and where).
    package init(_ description: String) { self.description = description }
}
