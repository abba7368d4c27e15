extension ReferenceFormat {
    /// What a root offset (§6) or a branch cell's child offset (§4) names: a page frame, or a
    /// leaf delta frame read as the leaf it describes (§4, "Leaf deltas").
    ///
    /// The tools that walk trees go through this, so a file holding deltas walks like one
    /// holding only pages. What a walk adds is its own: the level it expects, the bounds the
    /// parent sets, that no frame — a delta's base included — is reached twice.
    package struct TreeNode: Sendable {
        /// The frame at the offset: a page frame, or a leaf delta frame.
        package let frame: Frame
        /// For a leaf delta, its payload and its base page frame; `nil` for a page frame.
        package let delta: LeafDelta.Resolved?
        /// The page as it reads: the page frame's image, or the leaf a delta reads as. Its
        /// header is checked (``PageImage/init(_:pageSize:)``); a delta's cells are too
        /// (``LeafDelta/apply(to:deltaOffset:)``), a page frame's are the caller's
        /// (``PageImage/validateCells(frameOffset:)``).
        package let image: PageImage

        /// The node at `offset` in `file`, for pages of `pageSize` bytes; throws, saying why,
        /// when no valid page or leaf delta frame is there, or a delta does not resolve.
        package init(in file: [UInt8], at offset: Int, pageSize: Int) throws {
            let frame = try Frame(in: file, at: offset)
            self.frame = frame
            switch frame.type {
            case .page:
                delta = nil
                image = try PageImage(frame.payload, pageSize: pageSize)
            case .leafDelta:
                let resolved = try LeafDelta.resolve(in: file, deltaFrame: frame, pageSize: pageSize)
                delta = resolved
                image = resolved.leaf
            case .commit, .checkpoint, .overflow:
                throw FormatViolation("a \(frame.type) frame at \(offset), where a page or leaf delta must be")
            }
        }

        /// Where the node's frame starts.
        package var offset: Int { frame.offset }
        /// The frames the node takes (its own, then a delta's base), for live bytes (§6) and
        /// for "no frame reachable twice" (§4).
        package var frames: [Frame] { [frame] + (delta.map { [$0.base] } ?? []) }
    }
}
