import StrataTesting

extension FuzzCase {
    /// One field forgery offered for a payload: `width` bytes at `position` set to one of
    /// `values`, described by `name`.
    struct FieldChoice {
        var position: Int
        var width: Int
        var name: String
        var values: [UInt64]
    }

    /// One forgery of a whole payload: a description and the change, on the raw payload. It
    /// keeps the payload's length (an uncompressed frame is forged in place).
    typealias PayloadEdit = (name: String, apply: (inout [UInt8]) -> Void)

    /// The forgeries of a leaf delta frame's raw `payload` (FORMAT.md §4, "Leaf deltas"), each
    /// breaking one rule a reader must enforce: the base offset set to the bad offsets the
    /// other fields get, to a branch page frame, another leaf delta, an overflow or a commit
    /// frame, the delta itself or a frame after it (never a leaf page frame before it, which
    /// could be a valid older image: a store reading as another state is not damage a reader
    /// can see); the change count 0, 0xFFFF or one more than the changes; an op byte 0, 3 or
    /// 0xFF; a key length 0, 1025 or 0xFFFF; a put's value info as a page cell's is forged (and
    /// its overflow bit flipped); a put's overflow offset; two changes swapped, so keys no longer
    /// ascend.
    ///
    /// `frame` is the delta frame in the fixture; when it is compressed the surgery appends the
    /// forged delta uncompressed where the checkpoint frame is now, so "itself" and "after
    /// itself" are taken there.
    static func leafDeltaForgeries(_ frame: StoreSurgery.Frame, payload: [UInt8], fixture: FuzzFixture,
                                   surgery: StoreSurgery, badOffsets: [UInt64],
                                   rng: inout SplitMix64) -> (fields: [FieldChoice], edits: [PayloadEdit]) {
        typealias LeafDelta = ReferenceFormat.LeafDelta
        var fields: [FieldChoice] = []
        var edits: [PayloadEdit] = []
        guard payload.count >= LeafDelta.changesPosition else { return ([], []) }
        let places = LeafDelta.changePlaces(in: payload)

        // Where the forged delta lies, and the frame right after it.
        let selfOffset = frame.isCompressed ? surgery.checkpointOffset : frame.offset
        let selfLength = ReferenceFormat.FrameHeader.frameLength(storedLength: payload.count)
        var after: [UInt64] = [UInt64(selfOffset + selfLength), UInt64(selfOffset + 8)]
        if !frame.isCompressed,
           let leafAfter = fixture.frames.first(where: {
               $0.offset > frame.offset && $0.type == .page && $0.payload.first == ReferenceFormat.leafKind
           }) {
            after.append(UInt64(leafAfter.offset))
        }
        let branches = surgery.pageImages.filter { $0.value.first == ReferenceFormat.branchKind }.keys.sorted()
        let otherDeltas = fixture.frames.filter { $0.type == .leafDelta && $0.offset != frame.offset }.map(\.offset)
        /// A couple of frames of `type`, those before the delta first (a base must lie before it).
        func frames(_ type: ReferenceFrameType) -> [Int] {
            let all = fixture.frames.filter { $0.type == type }.map(\.offset)
            let before = Array(all.filter { $0 < selfOffset }.suffix(2))
            return Array((before + all.filter { $0 >= selfOffset }).prefix(2))
        }
        let wrongBases: [Int] = Array(branches.prefix(2)) + Array(otherDeltas.prefix(2)) + frames(.overflow)
            + frames(.commit)
        // Three choices (bad offsets, frames no base may be, the delta itself or after it), so
        // the base offset is not drowned by the per-change forgeries of a delta of many changes.
        for values in [badOffsets, wrongBases.map { UInt64($0) }, [UInt64(selfOffset)] + after] where !values.isEmpty {
            fields.append(FieldChoice(position: LeafDelta.baseOffsetPosition, width: 8, name: "delta base offset",
                                      values: values))
        }
        fields.append(FieldChoice(position: LeafDelta.countPosition, width: 2, name: "delta change count",
                                  values: [0, 0xFFFF, UInt64(places.count + 1)]))

        /// Valid frames that are not overflow frames, as the page cells' overflow offsets get.
        let notOverflow = fixture.frames.filter { $0.type != .overflow }.prefix(200).map { UInt64($0.offset) }
        for (i, place) in places.enumerated() {
            fields.append(FieldChoice(position: place.opPosition, width: 1, name: "delta change \(i) op",
                                      values: [0, 3, 0xFF]))
            fields.append(FieldChoice(position: place.keyLengthPosition, width: 2,
                                      name: "delta change \(i) key length", values: [0, 1025, 0xFFFF]))
            if let infoPosition = place.valueInfoPosition {
                let info = payload.littleEndian(at: infoPosition, width: 4)
                fields.append(FieldChoice(position: infoPosition, width: 4, name: "delta change \(i) value info",
                                          values: [0x7FFF_FFFF, 0xFFFF_FFFF, 0x8000_0000 | (64 << 20) + 1,
                                                   info ^ UInt64(ReferenceFormat.overflowBit)]))
            }
            if let referencePosition = place.overflowOffsetPosition {
                fields.append(FieldChoice(position: referencePosition, width: 8,
                                          name: "delta change \(i) overflow offset",
                                          values: badOffsets + notOverflow.suffix(3) + [UInt64(selfOffset)]))
            }
        }

        // Two changes swapped whole: their keys no longer ascend, and nothing else changes.
        if places.count >= 2 {
            let i = rng.below(places.count), j = (i + 1 + rng.below(places.count - 1)) % places.count
            let (first, second) = (places[min(i, j)], places[max(i, j)])
            edits.append(("delta changes \(min(i, j)) and \(max(i, j)) swapped (keys out of order)", { bytes in
                let firstBytes = Array(bytes[first.opPosition..<first.end])
                let between = Array(bytes[first.end..<second.opPosition])
                let secondBytes = Array(bytes[second.opPosition..<second.end])
                bytes.replaceSubrange(first.opPosition..<second.end, with: secondBytes + between + firstBytes)
            }))
        }
        return (fields, edits)
    }
}
