/// Thrown inside a workload step that rolls back.
struct CrashRollback: Error {}
