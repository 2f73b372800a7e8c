import Testing
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

@Suite("scaled pictures: GLES runs swscale's taps")
struct GLScaledTests {
    /// Sizes that shrink, grow, stretch one way and the other, odd widths and heights, and one
    /// row or column of output.
    static let sizes: [(Int, Int)] = [(160, 120), (201, 97), (480, 360), (128, 96), (333, 241), (640, 100), (90, 300), (7, 5)]

    static func frame(_ n: Int = 7, of name: String = "counter.mp4") throws -> VideoFrame {
        let reader = try FrameReader(input: try Fixtures.path(name))
        let f = VideoFrame()
        for _ in 0...n { guard try reader.next(into: f) else { throw SupportError("\(name) ended") } }
        return f
    }

    @Test("scaled to many sizes, GLES equals the CPU compositor byte for byte", arguments: sizes)
    func scaledEqualsCPU(width: Int, height: Int) throws {
        let frame = try Self.frame()
        let c = Composition(outputWidth: width, outputHeight: height, scaling: .stretch)
        let cpu = try CPUCompositor().compose(frame, as: c, width: width, height: height)
        let gl = try GLRenderer().render(.frame(frame), as: c)
        #expect(gl.width == width && gl.height == height)
        let same = gl.bytes == cpu.bytes
        #expect(same, "\(width)x\(height): \(firstDifference(cpu.bytes, gl.bytes))")
    }
}

extension GLScaledTests {
    /// The clip's frame `n` in each layout the exact path takes (planar 4:2:0, 4:2:2, 4:4:4,
    /// semi-planar), converted by swscale.
    static let formats: [PixelFormat] = [.yuv420p, PixelFormat(AV_PIX_FMT_YUV422P), .yuv444p, .nv12]

    @Test("turned, mirrored, in each chroma layout and range: GLES equals the CPU compositor",
          arguments: [("counter.mp4", 90), ("counter.mp4", 180), ("counter.mp4", 270), ("bt709.mp4", 0), ("fullrange.mp4", 0)])
    func orientationsAndFormats(name: String, rotation: Int) throws {
        let source = try Self.frame(5, of: name)
        let gl = try GLRenderer()
        let cpu = CPUCompositor()
        let scaler = Scaler()
        for format in Self.formats {
            let frame = VideoFrame()
            try scaler.convert(source, to: format, into: frame)
            // 4:2:2 turned a quarter is widened to 4:4:4 by the CPU first: drawn bilinear
            // by GLES (GLRenderer.exactScaledTaps), not compared here.
            if format == PixelFormat(AV_PIX_FMT_YUV422P) && rotation % 180 != 0 { continue }
            for mirrored in [false, true] {
                let o = Orientation(rotation: rotation, mirrored: mirrored)
                for (w, h) in [(150, 111), (260, 200)] {
                    let c = Composition(outputWidth: w, outputHeight: h, scaling: .stretch, orientation: o)
                    let a = try cpu.compose(frame, as: c, width: w, height: h)
                    let b = try gl.render(.frame(frame), as: c)
                    let same = a.bytes == b.bytes
                    #expect(same, "\(name) \(format) \(o) \(w)x\(h): \(firstDifference(a.bytes, b.bytes))")
                }
            }
        }
    }

    @Test("fit and fill into an output of another shape: the bars and the crop agree too")
    func fitAndFill() throws {
        let frame = try Self.frame()
        let gl = try GLRenderer()
        for mode in [ScalingMode.fit, .fill] {
            let c = Composition(outputWidth: 301, outputHeight: 301, scaling: mode)
            let a = try CPUCompositor().compose(frame, as: c, width: 301, height: 301)
            let b = try gl.render(.frame(frame), as: c)
            let same = a.bytes == b.bytes
            #expect(same, "\(mode): \(firstDifference(a.bytes, b.bytes))")
        }
    }

    @Test("the taps of one axis: identity at 1:1, weights summing to one, positions inside the source")
    func taps() throws {
        let same = try #require(ScalerTaps(source: 320, destination: 320, vertical: false))
        // One tap, padded to swscale's SIMD alignment with zeros.
        #expect((0..<320).allSatisfy { i in
            let w = Array(same.weights(at: i))
            return w.filter { $0 != 0 } == [1 << 14] && same.positions[i] + w.firstIndex(of: 1 << 14)! == i
        })
        #expect(same.weights.reduce(0, +) == 320 << 14)
        #expect(try #require(ScalerTaps(source: 240, destination: 240, vertical: true)).size == 1)
        for (src, dst, vertical) in [(320, 160, false), (240, 97, true), (120, 480, false), (1920, 97, true), (5, 3, false)] {
            let t = try #require(ScalerTaps(source: src, destination: dst, vertical: vertical))
            let one = vertical ? 1 << 12 : 1 << 14
            for i in 0..<dst {
                #expect(t.weights(at: i).reduce(0, +) == one, "\(src)->\(dst) at \(i)")
                #expect(t.positions[i] >= 0 && t.positions[i] + t.size <= max(src, t.size))
            }
        }
        // A shrink so steep that swscale would cascade two scalers: not drawn exactly.
        #expect(ScalerTaps(source: 8000, destination: 100, vertical: false) == nil)
        #expect(ScalerTaps(source: 1920, destination: 7, vertical: true) == nil)
    }
}

@Suite("the CPU compositor writes a zone's pixels and no others")
struct CompositorBoundsTests {
    @Test("into a wider canvas row, scaled (odd and even widths) or at its own size: the bytes past the zone's right edge are untouched",
          arguments: [(160, 120), (161, 121), (157, 100), (316, 238), (322, 240)])
    func noWritePastTheZone(width: Int, height: Int) throws {
        // A picture 316x238 (not a multiple of 8 wide), so that 316x238 is drawn at its own size.
        let frame = VideoFrame()
        try Scaler().convert(try GLScaledTests.frame(), to: .yuv420p, width: 316, height: 238, into: frame)
        let stride = 4 * (width + 16)
        var canvas = [UInt8](repeating: 0xA5, count: stride * height + 64)
        try canvas.withUnsafeMutableBytes {
            try CPUCompositor().compose(frame, as: Composition(scaling: .stretch), into: $0.baseAddress!, stride: stride, width: width, height: height)
        }
        for y in 0..<height {
            let past = canvas[(y * stride + 4 * width)..<((y + 1) * stride)]
            #expect(past.allSatisfy { $0 == 0xA5 }, "row \(y): \(past.filter { $0 != 0xA5 }.count) bytes written past the zone")
            if past.contains(where: { $0 != 0xA5 }) { return }
        }
        #expect(canvas[(stride * height)...].allSatisfy { $0 == 0xA5 })
    }
}
