import Testing
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport

@Suite("CPU renderer")
struct CPURendererTests {
    static let clips = ["counter.mp4", "bt709.mp4", "fullrange.mp4", "hevc10.mkv", "odd.mkv", "rotated.mp4", "anamorphic.mp4"]

    /// The upright size: rotated.mp4 turns 320x240 into 240x320; the others keep the stream's size.
    /// (odd.mkv comes out of tools/make-fixtures.sh as 320x240: testsrc2 rounds 321x241 down to its
    /// negotiated format's chroma grid. `oddDimensions` below makes a truly odd-sized clip.)
    static func expectedSize(_ name: String, _ video: VideoStreamInfo) -> (Int, Int) {
        name == "rotated.mp4" ? (240, 320) : (video.width, video.height)
    }

    @Test("rgb24 output equals ffmpeg's select=eq(n,N) -pix_fmt rgb24 byte for byte", arguments: clips, [0, 17])
    func bitExact(name: String, n: Int) throws {
        let path = try Fixtures.path(name)
        let (frame, video) = try decodeFrame(n, of: path)
        let image = try CPURenderer().render(frame, orientation: video.orientation)
        let (w, h) = Self.expectedSize(name, video)
        #expect(image.width == w && image.height == h, "size \(image.width)x\(image.height)")
        #expect(image.layout == .rgb24)
        #expect(image.bytes.count == w * h * 3)
        let reference = [UInt8](try Proc.ffmpeg(["-i", path, "-vf", "select=eq(n\\,\(n))", "-frames:v", "1",
                                                 "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
        #expect(reference.count == w * h * 3, "ffmpeg gave \(reference.count) bytes")
        #expect(image.bytes == reference, "\(name) frame \(n): \(firstDifference(image.bytes, reference))")
        if name != "rotated.mp4" {
            #expect(frameCode(image) == n, "code in the top band")
        }
    }

    @Test("rgb48be output equals ffmpeg's -pix_fmt rgb48be", arguments: ["counter.mp4", "hevc10.mkv"])
    func deepBitExact(name: String) throws {
        let path = try Fixtures.path(name)
        let (frame, video) = try decodeFrame(5, of: path)
        let image = try CPURenderer().render(frame, orientation: video.orientation, layout: .rgb48be)
        #expect(image.layout == .rgb48be)
        #expect(image.bytes.count == 320 * 240 * 6)
        let reference = [UInt8](try Proc.ffmpeg(["-i", path, "-vf", "select=eq(n\\,5)", "-frames:v", "1",
                                                 "-pix_fmt", "rgb48be", "-f", "rawvideo", "-"]))
        #expect(image.bytes == reference, "\(name): \(firstDifference(image.bytes, reference))")
        #expect(frameCode(image) == 5)
    }

    @Test("counter.mp4 frame 5 (binary 101): blocks 0 and 2 white, block 1 black")
    func knownColours() throws {
        let (frame, _) = try decodeFrame(5, of: try Fixtures.path("counter.mp4"))
        let image = try CPURenderer().render(frame)
        for block in [0, 2] {
            let p = image.pixel(x: block * 32 + 16, y: 16)
            #expect(p.r > 200 && p.g > 200 && p.b > 200, "block \(block): \(p)")
        }
        for block in [1, 3, 9] {
            let p = image.pixel(x: block * 32 + 16, y: 16)
            #expect(p.r < 40 && p.g < 40 && p.b < 40, "block \(block): \(p)")
        }
        #expect(frameCode(image) == 5)
    }

    @Test("the sample aspect ratio is carried, not resampled")
    func sampleAspectRatio() throws {
        let (frame, video) = try decodeFrame(0, of: try Fixtures.path("anamorphic.mp4"))
        let image = try CPURenderer().render(frame, orientation: video.orientation)
        #expect(image.width == 320 && image.height == 240)
        #expect(image.sampleAspectRatio == Rational(4, 3))
        let (square, _) = try decodeFrame(0, of: try Fixtures.path("counter.mp4"))
        #expect(try CPURenderer().render(square).sampleAspectRatio == Rational(1, 1))
    }

    @Test("odd dimensions (321x241, 4:4:4): rgb24 equals ffmpeg and frame MD5s equal framemd5")
    func oddDimensions() throws {
        let scratch = try Scratch()
        let path = try makeOddClip(in: scratch)
        let md5s = try Proc.ffmpegFrameMD5Lines(path).map(md5Column)
        #expect(md5s.count == 20)
        let reader = try FrameReader(input: path)
        #expect(reader.video.width == 321 && reader.video.height == 241)
        var checksum = FrameChecksum(video: reader.video, formatStartTime: reader.demuxer.formatStartTime)
        let renderer = CPURenderer()
        let frame = VideoFrame()
        var n = 0
        while try reader.next(into: frame) {
            #expect(try checksum.md5(of: frame).hex == (n < md5s.count ? md5s[n] : ""), "md5 of frame \(n)")
            if n == 0 || n == 17 {
                let image = try renderer.render(frame)
                #expect(image.width == 321 && image.height == 241)
                let reference = [UInt8](try Proc.ffmpeg(["-i", path, "-vf", "select=eq(n\\,\(n))", "-frames:v", "1",
                                                         "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
                #expect(reference.count == 321 * 241 * 3)
                #expect(image.bytes == reference, "frame \(n): \(firstDifference(image.bytes, reference))")
                #expect(frameCode(image) == n)
            }
            n += 1
        }
        #expect(n == 20)
    }

    @Test("rendering is deterministic and the renderer can be reused across sizes")
    func reuse() throws {
        let scratch = try Scratch()
        let renderer = CPURenderer()
        let (a, _) = try decodeFrame(3, of: try Fixtures.path("counter.mp4"))
        let (b, _) = try decodeFrame(3, of: try makeOddClip(in: scratch))
        let first = try renderer.render(a)
        let odd = try renderer.render(b)
        let again = try renderer.render(a)
        #expect(odd.width == 321 && odd.height == 241)
        #expect(first == again)
        #expect(frameCode(first) == 3)
        #expect(frameCode(odd) == 3)
    }

    @Test("rotated.mp4 is turned 90° clockwise: the top band becomes the right-hand columns")
    func rotatedLayout() throws {
        let (frame, video) = try decodeFrame(5, of: try Fixtures.path("rotated.mp4"))
        #expect(video.orientation == Orientation(rotation: 90))
        let renderer = CPURenderer()
        let stored = try renderer.render(frame)
        #expect(stored.width == 320 && stored.height == 240)
        #expect(frameCode(stored) == 5)
        let upright = try renderer.render(frame, orientation: video.orientation)
        #expect(upright.width == 240 && upright.height == 320)
        // Stored (x, y) lands at (239 - y, x): block b's middle (32b + 16, 16) is at (223, 32b + 16).
        var code = 0
        for bit in 0..<10 {
            let p = upright.pixel(x: 223, y: bit * 32 + 16)
            if (Int(p.r) + Int(p.g) + Int(p.b)) / 3 > 128 { code |= 1 << bit }
        }
        #expect(code == 5)
    }
}

@Suite("RGBImage.oriented")
struct RGBImageOrientationTests {
    // The 3×2 source:   A B C
    //                   D E F
    static let labels: [Character] = ["A", "B", "C", "D", "E", "F"]

    struct Turn: Sendable, CustomTestStringConvertible {
        var rotation: Int
        var mirrored: Bool
        /// The rows of the result, worked out by hand: rotate clockwise, then mirror left-right.
        var rows: [String]
        var testDescription: String { "rotate \(rotation)\(mirrored ? ", mirror" : "")" }
    }

    static let cases: [Turn] = [
        Turn(rotation: 0, mirrored: false, rows: ["ABC", "DEF"]),
        Turn(rotation: 0, mirrored: true, rows: ["CBA", "FED"]),
        Turn(rotation: 90, mirrored: false, rows: ["DA", "EB", "FC"]),
        Turn(rotation: 90, mirrored: true, rows: ["AD", "BE", "CF"]),
        Turn(rotation: 180, mirrored: false, rows: ["FED", "CBA"]),
        Turn(rotation: 180, mirrored: true, rows: ["DEF", "ABC"]),
        Turn(rotation: 270, mirrored: false, rows: ["CF", "BE", "AD"]),
        Turn(rotation: 270, mirrored: true, rows: ["FC", "EB", "DA"]),
    ]

    static func source(_ layout: RGBImage.Layout) -> RGBImage {
        // Pixel k has channels (10k+1, 10k+2, 10k+3); 16-bit layouts put them in the high bytes
        // with a low byte that also identifies the pixel.
        var bytes: [UInt8] = []
        for k in 0..<6 {
            for c in 1...3 {
                let v = UInt8(10 * k + c)
                if layout == .rgb24 { bytes.append(v) } else { bytes += [v, UInt8(100 + 10 * k + c)] }
            }
        }
        return RGBImage(width: 3, height: 2, layout: layout, bytes: bytes, sampleAspectRatio: Rational(4, 3))
    }

    static func label(_ p: (r: UInt8, g: UInt8, b: UInt8)) -> Character? {
        let k = Int(p.r) / 10
        guard k < 6, Int(p.r) == 10 * k + 1, Int(p.g) == 10 * k + 2, Int(p.b) == 10 * k + 3 else { return nil }
        return labels[k]
    }

    @Test("all eight turns and mirrors move pixels as worked out by hand",
          arguments: cases, [RGBImage.Layout.rgb24, .rgb48be])
    func orientation(turn: Turn, layout: RGBImage.Layout) throws {
        let expected = turn.rows
        let out = Self.source(layout).oriented(Orientation(rotation: turn.rotation, mirrored: turn.mirrored))
        #expect(out.height == expected.count)
        #expect(out.width == expected[0].count)
        #expect(out.layout == layout)
        #expect(out.bytes.count == 6 * layout.bytesPerPixel)
        #expect(out.sampleAspectRatio == Rational(4, 3))
        var rows: [String] = []
        for y in 0..<out.height {
            rows.append(String((0..<out.width).map { Self.label(out.pixel(x: $0, y: y)) ?? "?" }))
        }
        #expect(rows == expected, "rotate \(turn.rotation), mirrored \(turn.mirrored)")
        if layout == .rgb48be {
            // The low bytes travel with their pixel.
            for i in stride(from: 0, to: out.bytes.count, by: 2) {
                #expect(Int(out.bytes[i + 1]) == Int(out.bytes[i]) + 100)
            }
        }
    }

    @Test("four quarter turns give the picture back; mirroring twice too")
    func roundTrips() {
        let src = Self.source(.rgb24)
        var img = src
        for _ in 0..<4 { img = img.oriented(Orientation(rotation: 90)) }
        #expect(img == src)
        let mirror = Orientation(rotation: 0, mirrored: true)
        #expect(src.oriented(mirror).oriented(mirror) == src)
        #expect(src.oriented(.identity) == src)
    }
}
