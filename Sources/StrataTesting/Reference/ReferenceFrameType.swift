/// The kind of a frame (byte 4 of its header, §3).
package enum ReferenceFrameType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// A B+tree page image (§4).
    case page = 1
    /// One transaction's operations (§5).
    case commit = 2
    /// A checkpoint's catalog (§6).
    case checkpoint = 3
    /// A value too large for a leaf (§7).
    case overflow = 4
    /// A leaf as a page frame's image plus a few changed cells (§4, "Leaf deltas").
    case leafDelta = 5

    /// The longest raw payload a valid frame of this type holds (§3).
    package var maximumRawLength: Int {
        switch self {
        case .page, .leafDelta: return ReferenceFormat.pageSizes.upperBound
        case .commit, .checkpoint: return ReferenceFormat.maximumRecordLength
        case .overflow: return ReferenceFormat.maximumValueLength
        }
    }

    package var description: String {
        switch self {
        case .page: return "page"
        case .commit: return "commit"
        case .checkpoint: return "checkpoint"
        case .overflow: return "overflow"
        case .leafDelta: return "leaf delta"
        }
    }
}
