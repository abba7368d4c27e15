import ArgumentParser

/// The engines of `strata-bench kv`, by command-line name.
enum KVEngineName: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case strata, sqlite, lmdb

    var configuration: String {
        switch self {
        case .strata: return StrataEngine.configuration
        case .sqlite: return SQLiteEngine.configuration
        case .lmdb: return LMDBEngine.configuration
        }
    }
}
