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
        for character in pattern {
            if escaping {
                elements.append(.literal(character))
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "*" {
                // Consecutive stars match what one does; collapsing them keeps matching linear.
                if elements.last != .anyRun { elements.append(.anyRun) }
            } else if character == "?" {
                elements.append(.one)
            } else {
                elements.append(.literal(character))
            }
        }
        if escaping { elements.append(.literal("\\")) }
        self.elements = elements
    }

    /// Greedy matching that backtracks only to the last star: a later star can absorb
    /// anything an earlier one would have, so older choices never need revisiting.
    func matches(_ subject: String) -> Bool {
        var subjectIndex = subject.startIndex
        var patternIndex = 0
        var starPattern = -1
        var starSubject = subject.startIndex
        while subjectIndex < subject.endIndex {
            if patternIndex < elements.count {
                switch elements[patternIndex] {
                case .anyRun:
                    starPattern = patternIndex
                    starSubject = subjectIndex
                    patternIndex += 1
                    continue
                case .one:
                    subjectIndex = subject.index(after: subjectIndex)
                    patternIndex += 1
                    continue
                case .literal(let literal):
                    if subject[subjectIndex] == literal {
                        subjectIndex = subject.index(after: subjectIndex)
                        patternIndex += 1
                        continue
                    }
                }
            }
            guard starPattern >= 0 else { return false }
            patternIndex = starPattern + 1
            starSubject = subject.index(after: starSubject)
            subjectIndex = starSubject
        }
        while patternIndex < elements.count, elements[patternIndex] == .anyRun { patternIndex += 1 }
        return patternIndex == elements.count
    }
}
