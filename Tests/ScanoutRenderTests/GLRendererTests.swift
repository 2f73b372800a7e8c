import Testing
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

// GL renderer tests run for real on Mesa's llvmpipe through EGL's surfaceless platform.

@Suite("GL renderer agrees with the CPU renderer")
struct GLAgreementTests {
    static let clips = ["counter.mp4", "bt709.mp4", "fullrange.mp4", "hevc10.mkv", "rotated.mp4"]

    /// The frames compared: every frame of the 10-bit clip (swscale's vertical cubic chroma, where
    /// the shader reproduces its integer taps), a spread of frames of the others.
    static func checkedFrames(_ name: String) -> Set<Int> {
        name == "hevc10.mkv" ? Set(0..<30) : [0, 5, 7, 12, 20, 29]
    }

    /// Max channel difference between GL and CPU over `checkedFrames(name)` of `name`.
    static func worstDifference(_ name: String, options: EGLDisplayContext.Options = .init(), convert: PixelFormat? = nil) throws -> Int {
        let wanted = checkedFrames(name)
        let last = wanted.max()!
        let reader = try FrameReader(input: try Fixtures.path(name))
        let decoded = VideoFrame()
        let gl = try GLRenderer(context: try EGLDisplayContext(options: options))
        let upright = Composition(orientation: reader.video.orientation)
        let cpu = CPURenderer()
        let scaler = Scaler()
        var n = 0, worst = 0
        while n <= last, try reader.next(into: decoded) {
            defer { n += 1 }
            guard wanted.contains(n) else { continue }
            var frame = decoded
            if let convert {
                frame = VideoFrame()
                try scaler.convert(decoded, to: convert, into: frame)
                #expect(frame.pixelFormat == convert)
            }
            let a = try cpu.render(frame, orientation: reader.video.orientation)
            let b = try gl.render(.frame(frame), as: upright)
            #expect(b.width == a.width && b.height == a.height)
            let d = try #require(a.maxChannelDifference(b))
            worst = max(worst, d)
            if name != "rotated.mp4" { #expect(frameCode(b) == n) }
        }
        #expect(n == last + 1)
        return worst
    }

    @Test("at the video's own size (rotation applied), max channel difference ≤ 3", arguments: clips)
    func agreement(name: String) throws {
        let d = try Self.worstDifference(name)
        print("GL vs CPU \(name): max channel difference \(d)")
        #expect(d <= 3, "\(name): max channel difference \(d)")
    }

    @Test("nv12 and p010 frames (swscale conversions of the clips) agree too", arguments: [("counter.mp4", PixelFormat.nv12), ("hevc10.mkv", PixelFormat.p010)])
    func semiPlanar(name: String, format: PixelFormat) throws {
        let d = try Self.worstDifference(name, convert: format)
        print("GL vs CPU \(name) as \(format): max channel difference \(d)")
        #expect(d <= 3)
    }

    @Test("without GL_EXT_texture_norm16, 16-bit samples go up as byte pairs and agree the same")
    func bytePairs() throws {
        let ctx = try EGLDisplayContext(options: .init(hiddenExtensions: ["GL_EXT_texture_norm16"]))
        #expect(try FrameImporter(context: ctx).usesNorm16 == false)
        #expect(try Self.worstDifference("hevc10.mkv", options: .init(hiddenExtensions: ["GL_EXT_texture_norm16"])) <= 3)
        #expect(try Self.worstDifference("hevc10.mkv", options: .init(hiddenExtensions: ["GL_EXT_texture_norm16"]), convert: .p010) <= 3)
    }

    @Test("packed rgb24 and rgba frames come out unchanged", arguments: [PixelFormat.rgb24, PixelFormat.rgba])
    func packedRGB(format: PixelFormat) throws {
        let (decoded, _) = try decodeFrame(4, of: try Fixtures.path("counter.mp4"))
        let frame = VideoFrame()
        try Scaler().convert(decoded, to: format, into: frame)
        let reference = try CPURenderer().render(decoded)
        let image = try GLRenderer().render(.frame(frame))
        #expect(image.bytes == reference.bytes)
    }
}

@Suite("GL renderer composition")
struct GLCompositionTests {
    @Test("fit into a wider output: pillarbox in the background colour, the picture centred")
    func pillarbox() throws {
        let (frame, _) = try decodeFrame(5, of: try Fixtures.path("counter.mp4"))
        let gl = try GLRenderer()
        let image = try gl.render(.frame(frame), as: Composition(outputWidth: 640, outputHeight: 240, background: RGBColor(hex: "0000FF")!))
        #expect(image.width == 640 && image.height == 240)
        for (x, y) in [(0, 0), (159, 120), (480, 239), (639, 0)] {
            let p = image.pixel(x: x, y: y)
            #expect(p.r == 0 && p.g == 0 && p.b == 255, "(\(x), \(y)) = \(p)")
        }
        // The frame code, read 160 pixels to the right.
        var code = 0
        for bit in 0..<10 {
            let p = image.pixel(x: 160 + bit * 32 + 16, y: 16)
            if (Int(p.r) + Int(p.g) + Int(p.b)) / 3 > 128 { code |= 1 << bit }
        }
        #expect(code == 5)
    }

    @Test("scaled to half size, the picture still agrees with a CPU render of the frame on average")
    func downscale() throws {
        let (frame, _) = try decodeFrame(3, of: try Fixtures.path("counter.mp4"))
        let gl = try GLRenderer()
        let small = try gl.render(.frame(frame), as: Composition(outputWidth: 160, outputHeight: 120, scaling: .stretch))
        let full = try CPURenderer().render(frame)
        #expect(small.width == 160 && small.height == 120)
        // Block b of the code is now 16 pixels wide: frame 3 = bits 0 and 1.
        for (bit, white) in [(0, true), (1, true), (2, false), (5, false)] {
            let p = small.pixel(x: bit * 16 + 8, y: 8)
            #expect(((Int(p.r) + Int(p.g) + Int(p.b)) / 3 > 128) == white, "bit \(bit): \(p)")
        }
        // A flat area of testsrc2 (well inside a block): the same colour as the full-size render.
        let a = small.pixel(x: 40, y: 100), b = full.pixel(x: 81, y: 201)
        #expect(abs(Int(a.r) - Int(b.r)) <= 8 && abs(Int(a.g) - Int(b.g)) <= 8 && abs(Int(a.b) - Int(b.b)) <= 8, "\(a) vs \(b)")
    }

    @Test("rotation 180 with a mirror: GL equals the CPU renderer's turned picture within 3")
    func rotateMirror() throws {
        let (frame, _) = try decodeFrame(2, of: try Fixtures.path("counter.mp4"))
        for o in [Orientation(rotation: 180, mirrored: true), Orientation(rotation: 270), Orientation(rotation: 0, mirrored: true)] {
            let gl = try GLRenderer()
            let a = try CPURenderer().render(frame, orientation: o)
            let b = try gl.render(.frame(frame), as: Composition(orientation: o))
            #expect(b.width == a.width && b.height == a.height, "\(o)")
            #expect((a.maxChannelDifference(b) ?? 99) <= 3, "\(o): \(a.maxChannelDifference(b) ?? -1)")
        }
    }

    @Test("an overlay: opaque pixels replace the video, opacity 0.5 mixes half and half")
    func overlay() throws {
        let (frame, _) = try decodeFrame(0, of: try Fixtures.path("counter.mp4"))
        // 20x10: left half opaque red, right half fully transparent.
        var px: [UInt8] = []
        for _ in 0..<10 { for x in 0..<20 { px += x < 10 ? [255, 0, 0, 255] : [0, 255, 0, 0] } }
        let image = RGBAImage(width: 20, height: 10, bytes: px)
        let base = try CPURenderer().render(frame)
        let gl = try GLRenderer()
        var c = Composition(overlay: Overlay(image: image, x: 100, y: 50, opacity: 1))
        let full = try gl.render(.frame(frame), as: c)
        #expect(full.pixel(x: 105, y: 55) == (255, 0, 0) as (UInt8, UInt8, UInt8))
        let under = base.pixel(x: 115, y: 55), seen = full.pixel(x: 115, y: 55)
        #expect(abs(Int(under.g) - Int(seen.g)) <= 3, "transparent overlay pixels leave the video: \(under) vs \(seen)")
        c.overlay?.opacity = 0.5
        let half = try gl.render(.frame(frame), as: c)
        let v = base.pixel(x: 105, y: 55), h = half.pixel(x: 105, y: 55)
        #expect(abs(Int(h.r) - (255 + Int(v.r)) / 2) <= 3 && abs(Int(h.g) - Int(v.g) / 2) <= 3, "\(h) vs video \(v)")
    }

    @Test("one yuv.frag program per combination drawn, compiled once: swscale's paths, bilinear for scaled 10-bit")
    func programsPerCombination() throws {
        let (frame, _) = try decodeFrame(2, of: try Fixtures.path("counter.mp4"))
        #expect(frame.pixelFormat == .yuv420p)
        let gl = try GLRenderer()
        #expect(gl.compiledYUVPrograms == ["yuv_chroma_nearest_table_math"], "made by init")
        _ = try gl.render(.frame(frame))
        _ = try gl.render(.frame(frame))
        #expect(gl.compiledYUVPrograms == ["yuv_chroma_nearest_table_math"])
        _ = try gl.render(.frame(frame), as: Composition(outputWidth: frame.width / 2, outputHeight: frame.height / 2))
        let nv12 = VideoFrame()
        try Scaler().convert(frame, to: .nv12, into: nv12)
                _ = try gl.render(.frame(nv12))
        let (hevc10, _) = try decodeFrame(0, of: try Fixtures.path("hevc10.mkv"))
        _ = try gl.render(.frame(hevc10))
        _ = try gl.render(.frame(hevc10), as: Composition(outputWidth: 100, outputHeight: 60))
        _ = try gl.render(.frame(frame), as: Composition(outputWidth: 101, outputHeight: 60, scaling: .stretch))
        gl.tableMath = false
        _ = try gl.render(.frame(hevc10))
        #expect(gl.compiledYUVPrograms == [
            "yuv_chroma_cubic", "yuv_chroma_cubic_exact_table_math", "yuv_chroma_nearest_table_math",
            "yuv_chroma_scaled_exact_table_math", "yuv_chroma_scaled_full_table_math",
            "yuv_luma_bilinear_chroma_bilinear", "yuv_semi_planar_chroma_cubic_exact_table_math",
        ])
    }

    @Test("textures are pooled: same-size frames reuse them, a new layout makes new ones; stats are measured")
    func pooling() throws {
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        let gl = try GLRenderer()
        let frame = VideoFrame()
        for _ in 0..<3 {
            #expect(try reader.next(into: frame))
            _ = try gl.render(.frame(frame))
        }
        #expect(gl.importer.texturesCreated == 3)
        #expect(gl.lastStats.upload > 0 && gl.lastStats.draw > 0 && gl.lastStats.readback > 0)
        let nv12 = VideoFrame()
        try Scaler().convert(frame, to: .nv12, into: nv12)
        _ = try gl.render(.frame(nv12))
        #expect(gl.importer.texturesCreated == 4, "Y reused (same R8 size), CbCr plane made as RG8")
    }
}
