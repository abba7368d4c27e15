/// How a file is opened.
public enum FileOpenMode: Sendable {
    /// Read only; the file must exist.
    case readOnly
    /// Read and write; the file must exist.
    case readWrite
    /// Read and write; the file is created (empty) if it does not exist.
    case create
}
