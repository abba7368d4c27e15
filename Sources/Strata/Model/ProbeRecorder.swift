/// The property names reads of probe prototypes reported, in order.
@usableFromInline
final class ProbeRecorder {
    var names: [String] = []
    /// Above 0 while a computed property's body runs on the probe (its reads are not the path's).
    var muted = 0
    /// What is wrong with the dependencies of computed properties the probe read.
    var problems: [String] = []
}
