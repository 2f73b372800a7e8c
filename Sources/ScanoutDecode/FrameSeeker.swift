import CFFmpeg
import Synchronization
import ScanoutCore
import ScanoutDemux
#if canImport(Glibc)
import Glibc
#endif

/// Finds exact frames by number or time: seeks to the keyframe before the frame and decodes
/// forward, checking the timestamp of every frame it hands out. Stays exact with B-frames,
/// open GOPs (leading pictures are decoded from the previous GOP), MP4 edit lists, non-zero
/// start times and variable frame rates; where the index cannot be trusted (no timestamps) it
/// decodes from the start and counts. Not thread-safe; one owner at a time.
public final class FrameSeeker {
    public private(set) var reader: FrameReader
    public let index: FrameIndex
    private let demuxerOptions: DemuxerOptions
    private let decoderOptions: DecoderOptions
    private let frame = VideoFrame()
    /// Number of the frame held in `frame`, when the reader is positioned by counting from 0.
    private var linearPosition = -1
    /// Timestamp of the last frame decoded since the last seek, nil right after a seek.
    private var lastPts: Int64?
    private var currentKeyframe: Int?
    /// Seeks made (for tests and stats).
    public private(set) var seeks = 0
    /// Frames decoded to reach the requested ones (for tests and stats).
    public private(set) var framesDecoded = 0

    public init(input: String, demuxerOptions: DemuxerOptions = DemuxerOptions(), decoderOptions: DecoderOptions = DecoderOptions()) throws {
        self.demuxerOptions = demuxerOptions
        self.decoderOptions = decoderOptions
        index = try FrameIndex.cached(input: input, options: demuxerOptions)
        reader = try FrameReader(input: input, demuxerOptions: demuxerOptions, decoderOptions: decoderOptions)
    }

    /// A seeker over `reader` as it is, with an index built elsewhere (a timeshift buffer's
    /// packets, `TimeshiftBuffer.index()`): seeks go through the reader's packet source, and a
    /// frame the index lists but the source no longer holds fails instead of being searched for
    /// from the start (the source cannot be opened again).
    public init(reader: FrameReader, index: FrameIndex) {
        self.reader = reader
        self.index = index
        demuxerOptions = DemuxerOptions()
        decoderOptions = DecoderOptions()
        canReopen = false
    }

    /// Whether the input may be opened again to count frames from its start (`linear`).
    private var canReopen = true

    public var frameCount: Int { index.frameCount }

    /// The frame number shown `seconds` after the first frame.
    public func frameNumber(at seconds: Double) throws -> Int {
        let tb = reader.video.timeBase
        guard let n = index.frameNumber(at: seconds, timeBase: tb) else {
            let dur = index.timestamps.last.map { Double($0 - index.timestamps[0]) * tb.doubleValue } ?? 0
            throw MediaError.timeOutOfRange(input: reader.input, seconds: seconds, durationSeconds: dur)
        }
        if n == index.frameCount - 1, let last = index.timestamps.last {
            // Past the last frame's display time is past the end of the stream.
            let lastDuration = index.timestamps.count > 1 ? last - index.timestamps[index.timestamps.count - 2] : 0
            let end = Double(last - index.timestamps[0] + lastDuration) * tb.doubleValue
            // The instant the last frame stops being shown is outside the stream.
            if seconds > end - 1e-9 && lastDuration > 0 {
                throw MediaError.timeOutOfRange(input: reader.input, seconds: seconds, durationSeconds: end)
            }
        }
        return n
    }

    /// Decodes frame `number` and returns it (valid until the next call; `clone()` to keep it).
    public func frame(_ number: Int) throws -> VideoFrame {
        guard number >= 0 else { throw MediaError.frameOutOfRange(input: reader.input, requested: number, frameCount: index.frameCount) }
        if index.isSeekable {
            guard number < index.frameCount else {
                throw MediaError.frameOutOfRange(input: reader.input, requested: number, frameCount: index.frameCount)
            }
            if let f = try seekAndDecode(to: index.timestamps[number]) { return f }
        }
        guard canReopen else {
            throw MediaError.frameOutOfRange(input: reader.input, requested: number, frameCount: index.frameCount)
        }
        return try linear(to: number)
    }

    private func seekAndDecode(to target: Int64) throws -> VideoFrame? {
        guard var k = index.keyframeIndex(for: target) else { return nil }
        var attempts = 0
        // Keep decoding forward when the target is ahead and no nearer keyframe lies in between,
        // or one does but the target is nearer from here than from it (consecutive frames).
        if let last = lastPts, target > last, let cur = currentKeyframe {
            let fromHere = index.position(of: target) - index.position(of: last)
            let fromKeyframe = index.position(of: target) - index.position(of: index.keyframes[k].pts) + 1
            if k == cur || index.keyframes[k].pts <= last || fromHere <= fromKeyframe {
                if let f = try decodeForward(to: target) { return f }
            }
        }
        while attempts < 3 {
            let key = index.keyframes[k]
            seeks += 1
            currentKeyframe = k
            lastPts = nil
            linearPosition = -1
            if try reader.seek(toKeyframe: key), let f = try decodeForward(to: target) { return f }
            // Landed after the target (or the seek was imprecise): start one GOP earlier.
            attempts += 1
            guard k > 0 else { break }
            k -= 1
        }
        return nil
    }

    /// Decodes on to the frame shown at `target`, skipping the unreferenced pictures shown
    /// before it (nothing needs them: the target decodes to the same bits).
    private func decodeForward(to target: Int64) throws -> VideoFrame? {
        reader.skipUnreferencedBefore = target
        defer { reader.skipUnreferencedBefore = nil }
        while try reader.next(into: frame) {
            framesDecoded += 1
            guard let pts = frame.pts else { continue }
            lastPts = pts
            if pts == target { return frame }
            if pts > target && !isLeadingPicture(pts) { return nil }
        }
        return nil
    }

    /// Right after a seek, frames before the keyframe (open-GOP leading pictures) may come out
    /// first; they do not mean the target was passed.
    private func isLeadingPicture(_ pts: Int64) -> Bool {
        guard let k = currentKeyframe else { return false }
        return pts < index.keyframes[k].pts
    }

    private func linear(to number: Int) throws -> VideoFrame {
        if number == linearPosition { return frame }
        if number <= linearPosition || (linearPosition < 0 && (lastPts != nil || currentKeyframe != nil)) {
            // Back to the very start: a fresh reader, since streams without timestamps may not
            // seek at all.
            reader = try FrameReader(input: reader.input, demuxerOptions: demuxerOptions, decoderOptions: decoderOptions)
            currentKeyframe = nil
            lastPts = nil
            linearPosition = -1
        }
        while linearPosition < number {
            guard try reader.next(into: frame) else {
                throw MediaError.frameOutOfRange(input: reader.input, requested: number, frameCount: linearPosition + 1)
            }
            framesDecoded += 1
            linearPosition += 1
        }
        return frame
    }
}
