import Testing
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport

/// `FrameSeeker.frame(_:)`: frames requested out of order are exactly the frames ffmpeg numbers
/// that way, by their picture (the code in the top band) and by their MD5.
@Suite("Exact frames by index")
struct ExactFrameTests {
    static let clips: [(name: String, firstCode: Int)] = [
        ("counter.mp4", 0),
        ("counter_open.ts", 0),          // open GOPs, non-zero start time
        ("counter_editlist.mp4", 15),    // cut at 0.5 s at 30 fps: shows source frame 15 first
        ("counter_vfr.mkv", 0),
        ("counter.h264", 0),             // no timestamps: the linear path
        ("hevc10.mkv", 0),
    ]

    @Test("non-monotonic requests give the right frames", arguments: clips)
    func framesOutOfOrder(name: String, firstCode: Int) throws {
        let path = try Fixtures.path(name)
        let md5s = try Proc.ffmpegFrameMD5Lines(path).map(md5Column)
        try #require(!md5s.isEmpty)
        let last = md5s.count - 1
        let seeker = try FrameSeeker(input: path)
        if seeker.index.isSeekable {
            #expect(seeker.frameCount == md5s.count, "frame count")
        }
        let renderer = CPURenderer()
        var checksum = FrameChecksum(video: seeker.reader.video, formatStartTime: seeker.reader.demuxer.formatStartTime)

        let zero = try seeker.frame(0)
        let offset = frameCode(try renderer.render(zero))
        #expect(offset == firstCode, "code of frame 0")

        let order = [50, 3, 79, 24, 25, 25, 24, 0, 17, 16, last].filter { $0 <= last }
        for n in order {
            let frame = try seeker.frame(n)
            let image = try renderer.render(frame)
            #expect(frameCode(image) == offset + n, "\(name): frame \(n) shows code \(frameCode(image))")
            #expect(try checksum.md5(of: frame).hex == md5s[n], "\(name): md5 of frame \(n)")
        }
    }

    @Test("seeking uses keyframes: a late frame does not decode the whole stream")
    func seeksInsteadOfDecodingAll() throws {
        let seeker = try FrameSeeker(input: try Fixtures.path("counter.mp4"))
        #expect(seeker.index.isSeekable)
        _ = try seeker.frame(95)
        #expect(seeker.seeks >= 1)
        // GOPs of 30: the keyframe at 90 plus the frames up to 95 (and a little B-frame lookahead).
        #expect(seeker.framesDecoded < 40, "\(seeker.framesDecoded) frames decoded for frame 95")
    }

    @Test("a raw H.264 stream without timestamps is not seekable and still exact")
    func rawStreamIsLinear() throws {
        let seeker = try FrameSeeker(input: try Fixtures.path("counter.h264"))
        #expect(!seeker.index.isSeekable)
        let renderer = CPURenderer()
        #expect(frameCode(try renderer.render(try seeker.frame(40))) == 40)
        #expect(frameCode(try renderer.render(try seeker.frame(2))) == 2)
        #expect(frameCode(try renderer.render(try seeker.frame(59))) == 59)
    }
}
