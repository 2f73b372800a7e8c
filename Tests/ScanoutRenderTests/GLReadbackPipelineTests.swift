import Testing
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

// The pipelined readback against the synchronous one, on llvmpipe: the same pictures, byte for
// byte, in the same order, with every frame handed out by the end of the stream.
@Suite("GL readback pipeline")
struct GLReadbackPipelineTests {
    /// A picture scaled into a letterboxed canvas, turned, with an overlay.
    static let scaled: Composition = {
        var overlay: [UInt8] = []
        for y in 0..<16 { for x in 0..<24 { overlay += [UInt8(x * 10), UInt8(y * 15), 200, UInt8(x * 10 + 15)] } }
        return Composition(outputWidth: 200, outputHeight: 180, scaling: .fit, orientation: Orientation(rotation: 90),
                          background: RGBColor(hex: "203040")!,
                          overlay: Overlay(image: RGBAImage(width: 24, height: 16, bytes: overlay), x: 10, y: 20, opacity: 0.7))
    }()

    /// Renders the first `count` frames of `clip` both ways: synchronously (`GLRenderer.render`)
    /// and through a pipeline `depth` deep, each with its own renderer and context. Returns the
    /// synchronous images, and the pipeline's (tag, image) pairs in the order handed out, with
    /// how many each `submit` returned.
    static func renderBothWays(_ clip: String, count: Int, depth: Int, composition: Composition? = nil,
                               options: EGLDisplayContext.Options = .init())
        throws -> (sync: [RGBImage], piped: [(tag: Int, image: RGBImage)], perSubmit: [Int], pipeline: GLReadbackPipeline<Int>) {
        let reader = try FrameReader(input: try Fixtures.path(clip))
        let layout = composition ?? Composition(orientation: reader.video.orientation)
        let sync = try GLRenderer(context: try EGLDisplayContext(options: options))
        let pipeline = try GLReadbackPipeline<Int>(renderer: try GLRenderer(context: try EGLDisplayContext(options: options)), depth: depth)
        let frame = VideoFrame()
        var reference: [RGBImage] = []
        var piped: [(tag: Int, image: RGBImage)] = []
        var perSubmit: [Int] = []
        while reference.count < count, try reader.next(into: frame) {
            let n = reference.count
            reference.append(try sync.render(.frame(frame), as: layout))
            let done = try pipeline.submit(.frame(frame), as: layout, tag: n)
            perSubmit.append(done.count)
            piped += done.map { ($0.tag, $0.image) }
        }
        #expect(reference.count == count, "\(clip) has fewer than \(count) frames")
        piped += try pipeline.finish().map { ($0.tag, $0.image) }
        #expect(pipeline.framesInFlight == 0)
        return (reference, piped, perSubmit, pipeline)
    }

    static func expectSame(_ r: (sync: [RGBImage], piped: [(tag: Int, image: RGBImage)], perSubmit: [Int], pipeline: GLReadbackPipeline<Int>),
                           _ what: String) {
        #expect(r.piped.map(\.tag) == Array(r.sync.indices), "\(what): frames out of order or missing")
        for (s, p) in zip(r.sync, r.piped) {
            #expect(p.image.width == s.width && p.image.height == s.height && p.image.sampleAspectRatio == s.sampleAspectRatio)
            #expect(p.image.bytes == s.bytes, "\(what) frame \(p.tag): \(firstDifference(s.bytes, p.image.bytes))")
        }
    }

    @Test("pipelined output equals the synchronous output byte for byte, in order (8-bit, 10-bit HEVC, rotated, scaled)",
          arguments: [("counter.mp4", false), ("hevc10.mkv", false), ("rotated.mp4", false), ("bt709.mp4", true), ("hevc10.mkv", true)])
    func sameAsSynchronous(clip: String, scaled: Bool) throws {
        let r = try Self.renderBothWays(clip, count: 24, depth: 3, composition: scaled ? Self.scaled : nil)
        #expect(r.pipeline.isPipelined)
        Self.expectSame(r, "\(clip)\(scaled ? " scaled" : "")")
        if clip != "rotated.mp4" && !scaled {
            // The clips show their frame number: the pictures are the frames asked for.
            #expect(r.piped.map { frameCode($0.image) } == Array(0..<24))
        }
    }

    @Test("each submit hands out the frame depth - 1 before it; finish hands out the rest", arguments: [1, 2, 3, 5])
    func drain(depth: Int) throws {
        let r = try Self.renderBothWays("counter.mp4", count: 12, depth: depth)
        #expect(r.perSubmit == Array(repeating: 0, count: depth - 1) + Array(repeating: 1, count: 12 - (depth - 1)))
        #expect(r.piped.count == 12)
        Self.expectSame(r, "depth \(depth)")
    }

    @Test("a GLES 2 context reads back synchronously, each frame at its submit, with the same pictures")
    func gles2() throws {
        let r = try Self.renderBothWays("counter.mp4", count: 10, depth: 3, composition: Self.scaled, options: GLES2Tests.gles2)
        #expect(!r.pipeline.isPipelined)
        #expect(r.perSubmit == Array(repeating: 1, count: 10))
        Self.expectSame(r, "GLES 2")
        // And the GLES 2 pictures are the GLES 3 pipeline's.
        let gles3 = try Self.renderBothWays("counter.mp4", count: 10, depth: 3, composition: Self.scaled)
        for (a, b) in zip(r.piped, gles3.piped) {
            #expect((a.image.maxChannelDifference(b.image) ?? 99) <= 1, "frame \(a.tag): \(firstDifference(a.image.bytes, b.image.bytes))")
        }
    }

    @Test("depth 0 on GLES 3 reads back synchronously, as GLES 2 does")
    func depthZero() throws {
        let r = try Self.renderBothWays("hevc10.mkv", count: 6, depth: 0)
        #expect(!r.pipeline.isPipelined)
        #expect(r.perSubmit == Array(repeating: 1, count: 6))
        Self.expectSame(r, "depth 0")
    }

    @Test("frames of different sizes in flight, and synchronous renders in between, each come out right")
    func sizesAndSynchronousInBetween() throws {
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        let gl = try GLRenderer()
        let reference = try GLRenderer()
        let pipeline = try GLReadbackPipeline<Int>(renderer: gl, depth: 3)
        let sizes = [(320, 240), (640, 480), (160, 120), (641, 361), (320, 240), (100, 100)]
        let frame = VideoFrame()
        var expected: [RGBImage] = [], got: [(tag: Int, image: RGBImage)] = []
        for (n, size) in sizes.enumerated() {
            #expect(try reader.next(into: frame))
            let c = Composition(outputWidth: size.0, outputHeight: size.1, scaling: .fill)
            expected.append(try reference.render(.frame(frame), as: c))
            got += try pipeline.submit(.frame(frame), as: c, tag: n).map { ($0.tag, $0.image) }
            // The pipeline's own renderer, read back synchronously while frames are in flight.
            let direct = try gl.render(.frame(frame), as: c)
            #expect(direct.bytes == expected[n].bytes, "synchronous render between submits, frame \(n)")
        }
        got += try pipeline.finish().map { ($0.tag, $0.image) }
        #expect(got.map(\.tag) == Array(sizes.indices))
        for (e, g) in zip(expected, got) {
            #expect(g.image.width == e.width && g.image.height == e.height)
            #expect(g.image.bytes == e.bytes, "frame \(g.tag): \(firstDifference(e.bytes, g.image.bytes))")
        }
    }

    @Test("stage timings: upload and draw at every submit, readback once frames are handed out")
    func stats() throws {
        let (frame, _) = try decodeFrame(0, of: try Fixtures.path("counter.mp4"))
        let pipeline = try GLReadbackPipeline<Int>(renderer: try GLRenderer(), depth: 2)
        #expect(try pipeline.submit(.frame(frame), tag: 0).isEmpty)
        #expect(pipeline.lastStats.upload > 0 && pipeline.lastStats.draw > 0)
        #expect(try pipeline.submit(.frame(frame), tag: 1).map(\.tag) == [0])
        #expect(pipeline.lastStats.readback > 0)
        #expect(try pipeline.finish().map(\.tag) == [1])
        #expect(pipeline.lastStats.upload == 0 && pipeline.lastStats.readback > 0)
        #expect(try pipeline.finish().isEmpty)
    }
}
