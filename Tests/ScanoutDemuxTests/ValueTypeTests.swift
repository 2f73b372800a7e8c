import Testing
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutTestSupport

@Suite("Rational")
struct RationalTests {
    @Test("rescale between time bases is exact for exact ratios")
    func exact() {
        // Frame 31 at 30 fps in the 1/15360 time base of counter.mp4.
        #expect(Rational(1, 30).rescale(31, to: Rational(1, 15360)) == 15872)
        #expect(Rational(1, 15360).rescale(15872, to: Rational(1, 30)) == 31)
        #expect(Rational(1, 90000).rescale(132_000, to: Rational(1, 1000)) == 1467)  // 1466.67 → 1467
        #expect(Rational(1, 1000).rescale(0, to: Rational(1, 90000)) == 0)
    }

    @Test("rescale rounds to nearest, halves away from zero (av_rescale_q)")
    func rounding() {
        #expect(Rational(1, 3).rescale(1, to: Rational(1, 2)) == 1)   // 0.667
        #expect(Rational(1, 3).rescale(2, to: Rational(1, 1)) == 1)   // 0.667
        #expect(Rational(1, 3).rescale(1, to: Rational(1, 1)) == 0)   // 0.333
        #expect(Rational(1, 4).rescale(1, to: Rational(1, 2)) == 1)   // 0.5 → 1
        #expect(Rational(1, 4).rescale(-1, to: Rational(1, 2)) == -1) // -0.5 → -1
        #expect(Rational(1, 4).rescale(3, to: Rational(1, 2)) == 2)   // 1.5 → 2
    }

    @Test("rescale of large values does not overflow")
    func large() {
        // 2^40 × 1e6 / 9e4 = 12216795864177.78
        #expect(Rational(1, 90000).rescale(Int64(1) << 40, to: Rational(1, 1_000_000)) == 12_216_795_864_178)
        #expect(Rational(1, 1_000_000_000).rescale(Int64.max / 2, to: Rational(1, 1_000_000_000)) == Int64.max / 2)
    }

    @Test("doubleValue, validity, inversion, description")
    func basics() {
        #expect(Rational(1, 4).doubleValue == 0.25)
        #expect(Rational(1, 0).doubleValue == 0)
        #expect(Rational(30, 1).isValid)
        #expect(!Rational(0, 1).isValid)
        #expect(!Rational(1, 0).isValid)
        #expect(Rational(1001, 30000).inverted == Rational(30000, 1001))
        #expect(Rational(4, 3).description == "4/3")
    }
}

@Suite("PixelFormat")
struct PixelFormatTests {
    @Test("known names map to FFmpeg's formats")
    func names() throws {
        #expect(PixelFormat(name: "yuv420p") == .yuv420p)
        #expect(PixelFormat(name: "nv12") == .nv12)
        #expect(PixelFormat(name: "p010le") == .p010)
        #expect(PixelFormat(name: "yuv420p10le") == .yuv420p10)
        #expect(PixelFormat(name: "rgb24") == .rgb24)
        #expect(PixelFormat(name: "rgb48be") == .rgb48be)
        #expect(PixelFormat(name: "rgba") == .rgba)
        let f = try #require(PixelFormat(name: "yuv444p"))
        #expect(f.name == "yuv444p")
        #expect(f.description == "yuv444p")
    }

    @Test("unknown names give nil", arguments: ["", "bogus", "YUV420P ", "h264"])
    func unknown(name: String) {
        #expect(PixelFormat(name: name) == nil)
    }

    @Test("properties")
    func properties() throws {
        #expect(PixelFormat.yuv420p.planeCount == 3)
        #expect(PixelFormat.nv12.planeCount == 2)
        #expect(PixelFormat.rgb24.planeCount == 1)
        #expect(PixelFormat.yuv420p.bitDepth == 8)
        #expect(PixelFormat.yuv420p10.bitDepth == 10)
        #expect(PixelFormat.p010.bitDepth == 10)
        #expect(PixelFormat.yuv420p.isYUV)
        #expect(PixelFormat.nv12.isYUV)
        #expect(!PixelFormat.rgb24.isYUV)
        #expect(try #require(PixelFormat(name: "yuvj420p")).isFullRangeByDefinition)
        #expect(!PixelFormat.yuv420p.isFullRangeByDefinition)
        #expect(PixelFormat.yuv420p.packedSize(width: 320, height: 240) == 115_200)
        #expect(PixelFormat.nv12.packedSize(width: 320, height: 240) == 115_200)
        #expect(PixelFormat.yuv420p10.packedSize(width: 320, height: 240) == 230_400)
        #expect(PixelFormat.rgb24.packedSize(width: 321, height: 241) == 321 * 241 * 3)
        // Odd sizes round chroma up: 321×241 luma + 2 × 161×121 chroma.
        #expect(PixelFormat.yuv420p.packedSize(width: 321, height: 241) == 321 * 241 + 2 * 161 * 121)
    }
}

@Suite("Stream facts: orientation from the display matrix, codec, format, rates")
struct StreamFactsTests {
    @Test("rotated.mp4's display matrix (90° clockwise) gives rotate 90")
    func rotatedClip() throws {
        let demuxer = try Demuxer(input: try Fixtures.path("rotated.mp4"))
        #expect(demuxer.video.orientation == Orientation(rotation: 90))
        #expect(demuxer.video.width == 320 && demuxer.video.height == 240)
    }

    @Test("clips without a display matrix are upright", arguments: ["counter.mp4", "anamorphic.mp4", "counter_vfr.mkv", "counter_open.ts"])
    func uprightClips(name: String) throws {
        let demuxer = try Demuxer(input: try Fixtures.path(name))
        #expect(demuxer.video.orientation == .identity)
    }

    @Test("stream facts of counter.mp4 and anamorphic.mp4")
    func streamFacts() throws {
        let counter = try Demuxer(input: try Fixtures.path("counter.mp4"))
        #expect(counter.video.codecName == "h264")
        #expect(counter.video.pixelFormat == .yuv420p)
        #expect(counter.video.frameRate == Rational(30, 1))
        #expect(counter.video.timeBase == Rational(1, 15360))
        #expect(counter.video.declaredFrameCount == 96)
        let anamorphic = try Demuxer(input: try Fixtures.path("anamorphic.mp4"))
        #expect(anamorphic.video.sampleAspectRatio == Rational(4, 3))
        let hevc = try Demuxer(input: try Fixtures.path("hevc10.mkv"))
        #expect(hevc.video.codecName == "hevc")
        #expect(hevc.video.pixelFormat == .yuv420p10)
    }
}
