import Foundation
import StrataRecords
import StrataStorage
import CMalloc

extension Measure {
    /// The process's current resident set (`VmRSS`), in bytes.
    static func currentRSSBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kib = Int(fields[1]) { return kib * 1024 }
        }
        return nil
    }

    /// Bytes malloc has handed out and not had back (heap chunks in use plus mmapped chunks):
    /// what the program holds, without the allocator's free lists and fragmentation.
    static func mallocInUseBytes() -> Int {
        let info = mallinfo2()
        return Int(info.uordblks) + Int(info.hblkhd)
    }
}

/// Reopens a closed Strata store read-only with its stored model and runs `checkPages()`
/// (pages, checksums, order) and `checkRecords()` (indexes, inverses, derived values): the
/// check `records` and `objects` run on their Strata stores.
func checkStrataStore(path: String) -> StoreCheck {
    do {
        var options = StoreOptions()
        options.readOnly = true
        let store = try RecordStore(path: path, options: options)
        defer { try? store.close() }
        let pages = try store.checkPages().problems
        let records = try store.read { try $0.checkRecords(limit: maxCheckMessages) }
        return StoreCheck(problems: pages + records)
    } catch {
        return StoreCheck(problems: ["check could not run: \(error)"])
    }
}
