import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// One regression test per defect of the hardening issue's fetch items; the classes they
/// belong to are closed by FetchTypeCheckTests (and, for item 14, FetchDifferentialTests).
@Suite struct FetchRegressionTests {
    /// Item 12: a comparison of a string attribute with a number returned no rows, though its
    /// documentation said a type mismatch is an error.
    @Test func aStringComparedWithANumberIsAnInvalidFetch() throws {
        let (store, _) = try FetchTests.populated()
        let message = invalidFetchMessage {
            _ = try store.read { try $0.fetch(FetchRequest("Item", predicate: PropertyPath("title") > 5)) }
        }
        #expect(message?.contains("title") == true, "\(String(describing: message))")
        #expect(message?.contains("string") == true, "\(String(describing: message))")
        #expect(message?.contains("integer") == true, "\(String(describing: message))")
    }
}
