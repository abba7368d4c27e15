import ArgumentParser

/// Runs every example.
struct All: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the seven examples in turn.")

    func run() async throws {
        try FullName().run()
        try await BlogPosts().run()
        try TodoLists().run()
        try Invoices().run()
        try Location().run()
        try Properties().run()
        try RecordStores().run()
    }
}
