import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutTestSupport
import Testing

/// The visible bytes of `frame`'s first plane, row after row.
private func lumaBytes(_ frame: VideoFrame) -> [UInt8] {
    var out: [UInt8] = []
    frame.withPlaneRows(0) { out += $0 }
    return out
}

@Suite("still images shown for a time: decoded once, handed out on a timeline")
struct StillImageTests {
    /// A 320x240 picture in `format` (png, jpg, webp, bmp, tiff), made by ffmpeg in `scratch`.
    static func image(_ format: String, in scratch: Scratch) throws -> String {
        let path = scratch.path("picture.\(format)")
        _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x240", "-frames:v", "1", "-y", path])
        return path
    }

    @Test("PNG, JPEG, WebP, BMP and TIFF are still images; a video is not",
          arguments: ["png", "jpg", "webp", "bmp", "tiff"])
    func recognised(format: String) throws {
        let scratch = try Scratch()
        let demuxer = try Demuxer(input: try Self.image(format, in: scratch))
        #expect(demuxer.isStillImage, "\(demuxer.formatName)")
        #expect(!(try Demuxer(input: try Fixtures.path("counter.mp4"))).isStillImage)
    }

    @Test("shown for 2 s: the picture at every due time from 0, each for the time to the next, the last cut at 2 s; the same picture each time")
    func timeline() throws {
        let scratch = try Scratch()
        let path = try Self.image("png", in: scratch)
        var options = DecoderOptions()
        options.stillDuration = 2
        let reader = try FrameReader(input: path, decoderOptions: options)
        #expect(reader.isTimedStill)
        let tb = reader.video.timeBase
        #expect(reader.video.durationSeconds == 2 && reader.video.width == 320 && reader.video.height == 240)
        var stamps: [(Int64, Int64)] = []
        let frame = VideoFrame()
        var first: [UInt8]?
        while try reader.next(into: frame) {
            stamps.append((frame.pts!, frame.duration))
            let bytes = lumaBytes(frame)
            if let first { #expect(bytes == first) } else { first = bytes }
        }
        // tb 1/25: a showing every 6 ticks (about 4 a second), 9 in 2 s, the last 2 ticks long.
        #expect(tb == Rational(1, 25))
        #expect(stamps.map(\.0) == [0, 6, 12, 18, 24, 30, 36, 42, 48])
        #expect(stamps.map(\.1) == [6, 6, 6, 6, 6, 6, 6, 6, 2])
        #expect(reader.decoder.stats.framesDecoded == 9)
        #expect(reader.video.declaredFrameCount == 9)
        // The decoded picture equals the image as libavcodec decodes it for one frame.
        let once = try FrameReader(input: path)
        let plain = VideoFrame()
        #expect(try once.next(into: plain))
        #expect(lumaBytes(plain) == first)
        #expect(try !once.next(into: plain))
    }

    @Test("a seek lands on the due time at or before the one asked for, and the showing goes on to its end")
    func seek() throws {
        let scratch = try Scratch()
        var options = DecoderOptions()
        options.stillDuration = 3
        let reader = try FrameReader(input: try Self.image("jpg", in: scratch), decoderOptions: options)
        try reader.seek(toTimestamp: 40, position: nil)
        let frame = VideoFrame()
        var pts: [Int64] = []
        while try reader.next(into: frame) { pts.append(frame.pts!) }
        #expect(pts == [36, 42, 48, 54, 60, 66, 72])
        try reader.seek(toTimestamp: 0, position: nil)
        #expect(try reader.next(into: frame) && frame.pts == 0)
    }

    @Test("no duration: the picture once, as before; a duration of 0 or less is refused with the input named")
    func untimed() throws {
        let scratch = try Scratch()
        let path = try Self.image("webp", in: scratch)
        let reader = try FrameReader(input: path)
        #expect(!reader.isTimedStill)
        var options = DecoderOptions()
        options.stillDuration = 0
        #expect(throws: MediaError.openFailed(input: path, reason: "a still image is shown for more than 0 s, not 0.0")) {
            try FrameReader(input: path, decoderOptions: options)
        }
    }
}
