/// A failure the tool itself detects (as opposed to one the engine throws).
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
