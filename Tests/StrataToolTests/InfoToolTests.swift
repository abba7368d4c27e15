import Foundation
import Testing
import StrataStorage

/// `strata info` and the write lock: a process holding the store's write lock
/// has it open for writing, whether or not it has written a status record yet.
@Suite(.serialized) struct InfoToolTests {
    static func writerLine(_ stdout: String) -> String {
        stdout.split(separator: "\n").first { $0.hasPrefix("writer:") }.map(String.init) ?? "(no writer line)"
    }

    @Test func infoNamesTheLockHolderWithoutAStatusRecord() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-info-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/a.strata"

        // A writer that has committed nothing has written no status record, but holds the lock.
        let store = try Store(path: path)
        #expect(StoreStatus.read(storePath: path) == nil)
        let open = try Tool.run("strata", ["info", path])
        #expect(open.status == 0, "\(open.stderr)")
        let line = InfoToolTests.writerLine(open.stdout)
        #expect(line.contains("pid \(getpid())") && !line.contains("none") && !line.contains("no status record"), "\(line)")
        let json = try Tool.run("strata", ["info", path, "--json"])
        #expect(json.stdout.contains("\"lock_held\": true"), "\(json.stdout)")
        try store.close()

        // Closed: the record says so, and nobody holds the lock.
        let closed = InfoToolTests.writerLine(try Tool.run("strata", ["info", path]).stdout)
        #expect(closed.hasPrefix("writer:") && closed.contains("none"), "\(closed)")

        // A new writer holds the lock while the record still says the last one closed.
        let again = try Store(path: path)
        let reopened = InfoToolTests.writerLine(try Tool.run("strata", ["info", path]).stdout)
        #expect(reopened.contains("pid \(getpid())") && !reopened.contains("none"), "\(reopened)")
        try again.close()
    }
}
