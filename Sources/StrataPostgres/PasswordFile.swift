import Foundation

/// libpq's password file: lines `hostname:port:database:username:password`, `*` matching
/// anything, `\` escaping `:` and `\`, `#` starting a comment. The first matching line wins.
struct PasswordFile {
    let path: String?

    func password(host: String, port: Int, database: String, user: String) -> String? {
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = PasswordFile.fields(of: line)
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// The colon-separated fields of a line, with `\:` and `\\` unescaped.
    static func fields(of line: Substring) -> [String] {
        var fields: [String] = []
        var current = ""
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}
