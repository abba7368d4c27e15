// A run's core in JSON: in the line a child prints and in the `runs` of the report's rows.

extension RunCore {
    /// The JSON names of the four fields the benchmarks' files spell differently: `kv`'s files
    /// have named them in snake case since they first kept every run, `records`' and
    /// `objects`' as Swift does. Each keeps its spelling, so a file compares field for field
    /// with the ones written before it.
    struct JSONNames: Sendable {
        var checkClean: String
        var checkProblems: String
        var checkMessages: String
        var repeatIndex: String

        static let snakeCase = JSONNames(checkClean: "check_clean", checkProblems: "check_problems",
                                         checkMessages: "check_messages", repeatIndex: "repeat")
        static let swift = JSONNames(checkClean: "checkClean", checkProblems: "checkProblems",
                                     checkMessages: "checkMessages", repeatIndex: "repeatIndex")
    }

    /// Reads the core's fields from `decoder`'s object, which may hold other fields beside them.
    init(from decoder: Decoder, names: JSONNames) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        self.init(workload: try c.decode(String.self, forKey: JSONKey("workload")),
                  engine: try c.decode(String.self, forKey: JSONKey("engine")),
                  ops: try c.decode(Int.self, forKey: JSONKey("ops")),
                  seconds: try c.decode(Double.self, forKey: JSONKey("seconds")))
        p50Micros = try c.decodeIfPresent(Double.self, forKey: JSONKey("p50Micros"))
        p99Micros = try c.decodeIfPresent(Double.self, forKey: JSONKey("p99Micros"))
        bytes = try c.decodeIfPresent(Int.self, forKey: JSONKey("bytes"))
        closeMillis = try c.decodeIfPresent(Double.self, forKey: JSONKey("closeMillis"))
        peakRSSBytes = try c.decodeIfPresent(Int.self, forKey: JSONKey("peakRSSBytes"))
        checkClean = try c.decodeIfPresent(Bool.self, forKey: JSONKey(names.checkClean))
        checkProblems = try c.decodeIfPresent(Int.self, forKey: JSONKey(names.checkProblems))
        checkMessages = try c.decodeIfPresent([String].self, forKey: JSONKey(names.checkMessages))
        repeatIndex = try c.decodeIfPresent(Int.self, forKey: JSONKey(names.repeatIndex))
    }

    /// Writes the core's fields into `encoder`'s object (others may join them there); a field
    /// without a value is left out, as Swift's synthesized encoders leave it.
    func encode(to encoder: Encoder, names: JSONNames) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(workload, forKey: JSONKey("workload"))
        try c.encode(engine, forKey: JSONKey("engine"))
        try c.encode(ops, forKey: JSONKey("ops"))
        try c.encode(seconds, forKey: JSONKey("seconds"))
        try c.encodeIfPresent(p50Micros, forKey: JSONKey("p50Micros"))
        try c.encodeIfPresent(p99Micros, forKey: JSONKey("p99Micros"))
        try c.encodeIfPresent(bytes, forKey: JSONKey("bytes"))
        try c.encodeIfPresent(closeMillis, forKey: JSONKey("closeMillis"))
        try c.encodeIfPresent(peakRSSBytes, forKey: JSONKey("peakRSSBytes"))
        try c.encodeIfPresent(checkClean, forKey: JSONKey(names.checkClean))
        try c.encodeIfPresent(checkProblems, forKey: JSONKey(names.checkProblems))
        try c.encodeIfPresent(checkMessages, forKey: JSONKey(names.checkMessages))
        try c.encodeIfPresent(repeatIndex, forKey: JSONKey(names.repeatIndex))
    }
}
