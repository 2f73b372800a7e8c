import Foundation
import Testing
@testable import ScanoutCore
@testable import ScanoutDemux
@testable import ScanoutDecode
import ScanoutTestSupport

/// Where seeks land and what they decode: the exact seek from the target's own keyframe with the
/// unreferenced pictures before the target skipped, the inexact seek on the keyframe at or before
/// the time, the frame index scanned once per file.
@Suite("Seeking")
struct SeekTests {
    /// The frame before each keyframe but the first (the last of its GOP in presentation order):
    /// the farthest a seek decodes.
    static func lastFramesOfGOPs(_ index: FrameIndex) -> [Int] {
        index.keyframes.dropFirst().compactMap { key in
            index.timestamps.firstIndex(of: key.pts).map { $0 - 1 }
        }.filter { $0 > 0 }
    }

    @Test("an exact seek decodes from the target's own keyframe, skipping unreferenced pictures",
          arguments: ["counter.mp4", "counter_open.ts", "counter_vfr.mkv", "counter_open_long.ts"])
    func decodesFromItsOwnKeyframe(name: String) throws {
        let path = try Fixtures.path(name)
        let probe = try FrameSeeker(input: path)
        let targets = Self.lastFramesOfGOPs(probe.index)
        try #require(!targets.isEmpty)
        for n in targets {
            let seeker = try FrameSeeker(input: path)
            let target = seeker.index.timestamps[n]
            let key = try #require(seeker.index.keyframeIndex(for: target))
            let keyNumber = try #require(seeker.index.timestamps.firstIndex(of: seeker.index.keyframes[key].pts))
            let f = try seeker.frame(n)
            #expect(f.pts == target)
            #expect(seeker.seeks == 1, "\(name) frame \(n): \(seeker.seeks) seeks")
            // Without skipping: every frame from the keyframe to the target comes out of the decoder.
            let shownFromKey = n - keyNumber + 1
            #expect(seeker.framesDecoded < shownFromKey, "\(name) frame \(n): \(seeker.framesDecoded) frames decoded, \(shownFromKey) from its keyframe")
        }
    }

    @Test("frames after a seek are exact one after another (framemd5 --frames)", arguments: ["counter.mp4", "counter_open_long.ts"])
    func consecutiveFramesAfterASeek(name: String) throws {
        let path = try Fixtures.path(name)
        let md5s = try Proc.ffmpegFrameMD5Lines(path).map(md5Column)
        let seeker = try FrameSeeker(input: path)
        var checksum = FrameChecksum(video: seeker.reader.video, formatStartTime: seeker.reader.demuxer.formatStartTime)
        let first = seeker.index.frameCount - 40
        for n in first..<(first + 30) {
            #expect(try checksum.md5(of: try seeker.frame(n)).hex == md5s[n], "\(name) frame \(n)")
        }
        #expect(seeker.seeks == 1)
        #expect(seeker.framesDecoded < first, "decoded \(seeker.framesDecoded) frames")
    }

    @Test("an inexact seek lands on the keyframe at or before the time (MPEG-TS bisects to any packet)",
          arguments: ["counter_open_long.ts", "counter_open.ts", "counter.mp4"])
    func inexactSeekLandsOnTheKeyframeBefore(name: String) throws {
        let path = try Fixtures.path(name)
        let index = try FrameIndex.cached(input: path)
        let reader = try FrameReader(input: path)
        let frame = VideoFrame()
        for n in stride(from: 5, to: index.frameCount, by: 7) {
            let target = index.timestamps[n]
            let key = index.keyframes[try #require(index.keyframeIndex(for: target))]
            try reader.seek(toTimestamp: target, position: nil)
            #expect(try reader.next(into: frame))
            #expect(frame.pts == key.pts, "\(name): seek to frame \(n) (pts \(target)) shows pts \(String(describing: frame.pts)), keyframe \(key.pts)")
        }
        #expect(reader.decodeStats.hasErrors == false)
    }

    @Test("the index of a file is scanned once; a rewritten file is scanned again")
    func indexIsCachedPerFileVersion() throws {
        let scratch = try Scratch()
        let path = scratch.path("copy.mp4")
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: path)
        let a = try FrameSeeker(input: path)
        let b = try FrameSeeker(input: path)
        #expect(FrameIndexCache.shared.scans(of: path) == 1)
        #expect(a.index.timestamps == b.index.timestamps)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter_vfr.mkv"), toPath: path)
        let c = try FrameSeeker(input: path)
        #expect(FrameIndexCache.shared.scans(of: path) == 2)
        #expect(c.frameCount == 80)
    }
}

/// Opening fast: what the header of an H.264 MP4 says instead of a probe, and the first picture
/// decoded at once.
@Suite("First frame")
struct FirstFrameTests {
    static let mp4s = ["counter.mp4", "counter_editlist.mp4", "bt709.mp4", "fullrange.mp4", "anamorphic.mp4", "rotated.mp4", "faststart.mp4"]

    @Test("an H.264 MP4 is described from its header as ffprobe's probe describes it", arguments: mp4s)
    func describedWithoutProbing(name: String) throws {
        let path = try Fixtures.path(name)
        let demuxer = try Demuxer(input: path)
        #expect(!demuxer.probed)
        let r = try Proc.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                         "stream=pix_fmt,profile,sample_aspect_ratio,color_range,color_space:format=start_time", "-of", "default=nw=1", path])
        let facts = Dictionary(r.stdoutText.split(separator: "\n").compactMap { line -> (String, String)? in
            let kv = line.split(separator: "=", maxSplits: 1).map(String.init)
            return kv.count == 2 ? (kv[0], kv[1]) : nil
        }, uniquingKeysWith: { a, _ in a })
        let v = demuxer.video
        #expect(v.pixelFormat.name == facts["pix_fmt"])
        #expect(v.profile == facts["profile"])
        #expect("\(v.sampleAspectRatio.num):\(v.sampleAspectRatio.den)" == facts["sample_aspect_ratio"])
        #expect(v.colorRange == (facts["color_range"] == "pc" ? .full : facts["color_range"] == "tv" ? .limited : .unspecified))
        let start = try #require(demuxer.formatStartTime)
        #expect(abs(Double(start) / 1e6 - (Double(facts["start_time"] ?? "") ?? -1)) < 1e-6)
    }

    @Test("other containers are probed", arguments: ["counter_open.ts", "counter_vfr.mkv", "vp9.webm"])
    func othersAreProbed(name: String) throws {
        #expect(try Demuxer(input: try Fixtures.path(name)).probed)
    }

    @Test("a stream that starts with an IDR picture gives its first frame after one packet",
          arguments: ["counter.mp4", "counter_open.ts", "counter_vfr.mkv"])
    func firstFrameAfterOnePacket(name: String) throws {
        let reader = try FrameReader(input: try Fixtures.path(name), decoderOptions: DecoderOptions(threads: 2))
        let frame = VideoFrame()
        #expect(try reader.next(into: frame))
        #expect(reader.demuxer.packetsRead == 1)
        // And the frames after it are all there, each once.
        var count = 1
        while try reader.next(into: frame) { count += 1 }
        #expect(count == (try FrameIndex.cached(input: try Fixtures.path(name)).frameCount))
        #expect(reader.decodeStats.framesDecoded == count)
    }
}
