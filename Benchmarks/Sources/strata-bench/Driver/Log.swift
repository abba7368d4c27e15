import Foundation

/// A progress line on standard error (standard output carries the report and JSON lines).
func log(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
