import Foundation
import Strata
import StrataTesting
import Testing

/// The undo tests' model: notes in folders (nullify), attachments of folders (cascade), labels
/// on notes (many-to-many), each with a `uid` the tests name it by (an object a save deleted
/// comes back under a new identity).
final class UndoFolder: ManagedObject {
    @Attribute var uid: Int64
    @Attribute var name: String
    @Relationship(inverse: \UndoNote.folder) var notes: Set<UndoNote>
    @Relationship(deleteRule: .cascade, inverse: \UndoAttachment.folder) var attachments: Set<UndoAttachment>
    @Derived("notes.@count") var noteCount: Int64
}

final class UndoAttachment: ManagedObject {
    @Attribute var uid: Int64
    @Attribute var name: String
    @Relationship var folder: UndoFolder?
}

final class UndoNote: ManagedObject {
    @Attribute var uid: Int64
    @Attribute var text: String
    @Attribute(default: 0) var rank: Int64
    @CodableAttribute var tags: [String] = []
    @Relationship var folder: UndoFolder?
    @Relationship(inverse: \UndoLabel.notes) var labels: Set<UndoLabel>
}

final class UndoLabel: ManagedObject {
    @Attribute var uid: Int64
    @Attribute var name: String
    @Relationship var notes: Set<UndoNote>
}

/// Model-based test of undo and redo: random edits (attributes, to-ones, many-to-many links,
/// inserts, deletes), events closed by `processPendingChanges`, saves and explicit groups,
/// undos and redos, against a reference that keeps the state at every step boundary. After an
/// undo the context must show exactly the state before the step, after a redo the state after
/// it — across saves (deletes a save carried out, and the links and to-ones its nullify rules
/// broke, come back) — and a fetch must count what the reference counts.
/// 12 seeds × 300 operations here; `STRATA_MODEL_SEEDS=N` runs 1…N, `STRATA_UNDO_SEED=N` seed N alone.
@Suite struct UndoModelTests {
    static let classes: [ManagedObject.Type] = [UndoFolder.self, UndoNote.self, UndoLabel.self, UndoAttachment.self]

    struct NoteState: Equatable {
        var text: String
        var rank: Int64
        var tags: [String]
        var folder: Int64?
        var labels: [Int64]
    }

    struct State: Equatable, CustomStringConvertible {
        var notes: [Int64: NoteState] = [:]
        var folders: [Int64: [Int64]] = [:]
        var folderNames: [Int64: String] = [:]
        var labels: [Int64: [Int64]] = [:]
        /// Attachments by uid: name and folder.
        var attachments: [Int64: String] = [:]
        var folderAttachments: [Int64: [Int64]] = [:]

        var description: String {
            let n = notes.keys.sorted().map { "n\($0)=\(notes[$0]!)" }.joined(separator: " ")
            let f = folders.keys.sorted().map { "f\($0)\(folderNames[$0]!)=\(folders[$0]!)" }.joined(separator: " ")
            let l = labels.keys.sorted().map { "l\($0)=\(labels[$0]!)" }.joined(separator: " ")
            let a = attachments.keys.sorted().map { "a\($0)=\(attachments[$0]!)" }.joined(separator: " ")
            let fa = folderAttachments.keys.sorted().map { "f\($0)=\(folderAttachments[$0]!)" }.joined(separator: " ")
            return "[\(n)] [\(f)] [\(l)] [\(a)] [\(fa)]"
        }
    }

    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["STRATA_UNDO_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? ProcessInfo.processInfo.environment["STRATA_MODEL_SEEDS"].flatMap(UInt64.init).map { Array(1...max(1, $0)) }
        ?? Array(1...12)

    @Test(arguments: seeds) func undoAndRedoRestoreEveryStepsState(seed: UInt64) throws {
        try withContainer(for: Self.classes) { container in
            var rng = SplitMix64(seed: mixSeed(0x0_DEAD_0, seed))
            let context = ModelContext(container)
            let stack = UndoStack()
            context.undoStack = stack
            var notes: [UndoNote] = []
            var folders: [UndoFolder] = []
            var labels: [UndoLabel] = []
            var attachments: [UndoAttachment] = []
            var nextUID: Int64 = 1
            var log: [String] = []

            func live<T: ManagedObject>(_ objects: [T]) -> [T] {
                objects.filter { $0.context === context && !$0.isDeleted }
            }
            // Odd seeds hold every object they make; even ones hold none between operations
            // (each works on what a fetch returns), so unchanged objects are released and steps
            // find them again by identity, or make them again.
            let holds = seed % 2 == 1
            func current<T: ManagedObject>(_ held: [T]) throws -> [T] {
                holds ? live(held) : try context.fetch(FetchDescriptor<T>())
            }
            /// Live attachments but those of a deleted folder, which the save's cascade deletes.
            func visible(_ objects: [UndoAttachment]) throws -> [UndoAttachment] {
                try current(objects).filter { $0.folder?.isDeleted != true }
            }
            func dump() throws -> State {
                var state = State()
                for note in try current(notes) {
                    let folder = note.folder.flatMap { $0.isDeleted ? nil : $0.uid }
                    state.notes[note.uid] = NoteState(text: note.text, rank: note.rank, tags: note.tags, folder: folder,
                                                      labels: note.labels.map(\.uid).sorted())
                }
                for folder in try current(folders) {
                    state.folders[folder.uid] = folder.notes.map(\.uid).sorted()
                    state.folderNames[folder.uid] = folder.name
                }
                for label in try current(labels) { state.labels[label.uid] = label.notes.map(\.uid).sorted() }
                for attachment in try visible(attachments) {
                    state.attachments[attachment.uid] = "\(attachment.name) in \(attachment.folder.map { "f\($0.uid)" } ?? "nil")"
                }
                for folder in try current(folders) {
                    state.folderAttachments[folder.uid] = folder.attachments.map(\.uid).sorted()
                }
                return state
            }
            func check(_ expected: State, _ what: String) throws {
                let now = try dump()
                guard now == expected else {
                    let recent = log.suffix(60).joined(separator: "\n")
                    Issue.record("seed \(seed), after \(what):\n got      \(now)\n expected \(expected)\n\(recent)")
                    throw StrataError.invalidArgument("state differs")
                }
                do {
                    #expect(try context.fetchCount(FetchDescriptor<UndoNote>()) == now.notes.count, "seed \(seed)")
                    #expect(try context.fetchCount(FetchDescriptor<UndoFolder>()) == now.folders.count, "seed \(seed)")
                } catch {
                    Issue.record("seed \(seed): a fetch after \(what) threw \(error)\n\(log.suffix(60).joined(separator: "\n"))")
                    throw error
                }
            }

            var undoStates: [State] = []
            var redoStates: [State] = []
            var eventStart = try dump()
            var grouping = 0
            func closeEvent() throws {
                guard grouping == 0 else { return }
                let now = try dump()
                if now != eventStart {
                    undoStates.append(eventStart)
                    redoStates = []
                }
                eventStart = now
            }

            for step in 0..<300 {
                let roll = rng.below(112)
                let liveNotes = try current(notes), liveFolders = try current(folders), liveLabels = try current(labels)
                switch roll {
                case 0..<12 where !liveNotes.isEmpty:
                    let note = liveNotes[rng.below(liveNotes.count)]
                    let text = ["a", "b", "c"][rng.below(3)]
                    log.append("\(step): n\(note.uid).text = \(text)")
                    note.text = text
                case 12..<20 where !liveNotes.isEmpty:
                    let note = liveNotes[rng.below(liveNotes.count)]
                    if rng.chance(0.5) {
                        note.rank = Int64(rng.below(4))
                        log.append("\(step): n\(note.uid).rank = \(note.rank)")
                    } else {
                        note.tags = Array(["x", "y", "z"].prefix(rng.below(4)))
                        log.append("\(step): n\(note.uid).tags = \(note.tags)")
                    }
                case 20..<24 where !liveFolders.isEmpty:
                    let folder = liveFolders[rng.below(liveFolders.count)]
                    folder.name = ["x", "y"][rng.below(2)]
                    log.append("\(step): f\(folder.uid).name = \(folder.name)")
                case 24..<36 where !liveNotes.isEmpty:
                    let note = liveNotes[rng.below(liveNotes.count)]
                    // A note whose folder is deleted (not saved yet) keeps it: the reference
                    // reads it as nil already, so moving it to nil would be no visible change.
                    guard note.folder?.isDeleted != true else { continue }
                    let folder = liveFolders.isEmpty || rng.chance(0.25) ? nil : liveFolders[rng.below(liveFolders.count)]
                    log.append("\(step): n\(note.uid).folder = \(folder.map { "f\($0.uid)" } ?? "nil")")
                    note.folder = folder
                case 36..<46 where !liveNotes.isEmpty && !liveLabels.isEmpty:
                    let note = liveNotes[rng.below(liveNotes.count)]
                    let label = liveLabels[rng.below(liveLabels.count)]
                    if note.labels.contains(label) { note.labels.remove(label) } else { note.labels.insert(label) }
                    log.append("\(step): toggle n\(note.uid) l\(label.uid)")
                case 46..<56:
                    let note = UndoNote()
                    note.uid = nextUID
                    nextUID += 1
                    note.text = "new"
                    context.insert(note)
                    if !liveFolders.isEmpty, rng.chance(0.6) { note.folder = liveFolders[rng.below(liveFolders.count)] }
                    if holds { notes.append(note) }
                    log.append("\(step): insert n\(note.uid) in \(note.folder.map { "f\($0.uid)" } ?? "nil")")
                case 56..<60:
                    let folder = UndoFolder()
                    folder.uid = nextUID
                    nextUID += 1
                    folder.name = "x"
                    context.insert(folder)
                    if holds { folders.append(folder) }
                    log.append("\(step): insert f\(folder.uid)")
                case 60..<63:
                    let label = UndoLabel()
                    label.uid = nextUID
                    nextUID += 1
                    label.name = "l"
                    context.insert(label)
                    if holds { labels.append(label) }
                    log.append("\(step): insert l\(label.uid)")
                case 63..<69 where !liveNotes.isEmpty:
                    let note = liveNotes[rng.below(liveNotes.count)]
                    log.append("\(step): delete n\(note.uid)")
                    try context.delete(note)
                case 69..<72 where !liveFolders.isEmpty:
                    let folder = liveFolders[rng.below(liveFolders.count)]
                    log.append("\(step): delete f\(folder.uid)")
                    try context.delete(folder)
                case 72..<74 where !liveLabels.isEmpty:
                    let label = liveLabels[rng.below(liveLabels.count)]
                    log.append("\(step): delete l\(label.uid)")
                    try context.delete(label)
                case 74..<80:
                    log.append("\(step): processPendingChanges")
                    context.processPendingChanges()
                    try closeEvent()
                case 80..<85:
                    log.append("\(step): save")
                    try closeEvent()
                    let before = try dump()
                    do { try context.save() } catch {
                        Issue.record("seed \(seed): save threw \(error)\n\(log.suffix(60).joined(separator: "\n"))")
                        throw error
                    }
                    try check(before, "save")
                case 85..<97:
                    let undoing = roll < 93
                    log.append("\(step): \(undoing ? "undo" : "redo")")
                    grouping = 0
                    try closeEvent()
                    let can = undoing ? stack.canUndo : stack.canRedo
                    #expect(can == !(undoing ? undoStates : redoStates).isEmpty, "seed \(seed) step \(step)")
                    if undoing { context.undo() } else { context.redo() }
                    if let next = undoing ? undoStates.popLast() : redoStates.popLast() {
                        if undoing { redoStates.append(eventStart) } else { undoStates.append(eventStart) }
                        eventStart = next
                    }
                    try check(eventStart, undoing ? "undo" : "redo")
                case 99..<112:
                    let liveAttachments = try visible(attachments)
                    switch rng.below(4) {
                    case 0:
                        let attachment = UndoAttachment()
                        attachment.uid = nextUID
                        nextUID += 1
                        attachment.name = "a"
                        context.insert(attachment)
                        if !liveFolders.isEmpty { attachment.folder = liveFolders[rng.below(liveFolders.count)] }
                        if holds { attachments.append(attachment) }
                        log.append("\(step): insert a\(attachment.uid) in \(attachment.folder.map { "f\($0.uid)" } ?? "nil")")
                    case 1 where !liveAttachments.isEmpty:
                        let attachment = liveAttachments[rng.below(liveAttachments.count)]
                        let folder = liveFolders.isEmpty || rng.chance(0.3) ? nil : liveFolders[rng.below(liveFolders.count)]
                        log.append("\(step): a\(attachment.uid).folder = \(folder.map { "f\($0.uid)" } ?? "nil")")
                        attachment.folder = folder
                    case 2 where !liveAttachments.isEmpty:
                        let attachment = liveAttachments[rng.below(liveAttachments.count)]
                        attachment.name = ["a", "b"][rng.below(2)]
                        log.append("\(step): a\(attachment.uid).name = \(attachment.name)")
                    case 3 where !liveAttachments.isEmpty:
                        let attachment = liveAttachments[rng.below(liveAttachments.count)]
                        log.append("\(step): delete a\(attachment.uid)")
                        try context.delete(attachment)
                    default:
                        continue
                    }
                case 97:
                    log.append("\(step): beginGrouping")
                    if grouping == 0 { try closeEvent() }
                    stack.beginGrouping()
                    grouping += 1
                case 98 where grouping > 0:
                    log.append("\(step): endGrouping")
                    stack.endGrouping()
                    grouping -= 1
                    try closeEvent()
                default:
                    continue
                }
            }
            // Everything undone, saved, then redone and saved: the store holds what the
            // context shows, derived counts included.
            grouping = 0
            try closeEvent()
            // Redoing everything ends where the oldest redo step leads (steps undone before
            // stay redoable after the ones undone here).
            let afterRedoingAll = redoStates.first ?? eventStart
            while stack.canUndo { context.undo() }
            do { try context.save() } catch {
                Issue.record("seed \(seed): the save after undoing all threw \(error)\n\(log.suffix(60).joined(separator: "\n"))")
                throw error
            }
            try check(undoStates.first ?? eventStart, "undoing everything")
            while stack.canRedo { context.redo() }
            try check(afterRedoingAll, "redoing everything")
            do { try context.save() } catch {
                Issue.record("seed \(seed): the save after redoing all threw \(error)\n\(log.suffix(80).joined(separator: "\n"))")
                throw error
            }
            let final = try dump()
            let other = ModelContext(container)
            for folder in try other.fetch(FetchDescriptor<UndoFolder>()) {
                #expect(final.folders[folder.uid] == folder.notes.map(\.uid).sorted(), "seed \(seed)")
                #expect(folder.noteCount == Int64(folder.notes.count), "seed \(seed)")
            }
            #expect(try other.fetchCount(FetchDescriptor<UndoNote>()) == final.notes.count, "seed \(seed)")
            for label in try other.fetch(FetchDescriptor<UndoLabel>()) {
                #expect(final.labels[label.uid] == label.notes.map(\.uid).sorted(), "seed \(seed)")
            }
        }
    }
}
