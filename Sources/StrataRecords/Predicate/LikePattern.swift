/// A compiled `LIKE` pattern: `*` matches any run of characters (also none), `?` exactly one
/// character, and `\` makes the character after it literal. Characters are Swift
/// `Character`s, so `?` matches "é" whether it is spelled with one scalar or two.
struct LikePattern: Sendable {
    private enum Element: Sendable, Equatable {
        case literal(Character)
        case one
        case anyRun
    }

    private let elements: [Element]

    init(_ pattern: String) {
        var elements: [Element] = []
        var escaping = false
        for ch in pattern {
            if escaping {
                elements.append(.literal(ch))
                escaping = false
            } else if ch == "\\" {
                escaping = true
            } else if ch == "*" {
                // Consecutive stars match what one does; collapsing them keeps matching linear.
                if elements.last != .anyRun { elements.append(.anyRun) }
            } else if ch == "?" {
                elements.append(.one)
            } else {
                elements.append(.literal(ch))
            }
        }
        if escaping { elements.append(.literal("\\")) }
        self.elements = elements
    }

    /// Greedy matching that backtracks only to the last star: a later star can absorb
    /// anything an earlier one would have, so older choices never need revisiting.
    func matches(_ s: String) -> Bool {
        var si = s.startIndex
        var pi = 0
        var starPattern = -1
        var starSubject = s.startIndex
        while si < s.endIndex {
            if pi < elements.count {
                switch elements[pi] {
                case .anyRun:
                    starPattern = pi
                    starSubject = si
                    pi += 1
                    continue
                case .one:
                    si = s.index(after: si)
                    pi += 1
                    continue
                case .literal(let c):
                    if s[si] == c {
                        si = s.index(after: si)
                        pi += 1
                        continue
                    }
                }
            }
            guard starPattern >= 0 else { return false }
            pi = starPattern + 1
            starSubject = s.index(after: starSubject)
            si = starSubject
        }
        while pi < elements.count, elements[pi] == .anyRun { pi += 1 }
        return pi == elements.count
    }
}
