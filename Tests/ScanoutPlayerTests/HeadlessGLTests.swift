import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutRender
import ScanoutTestSupport
import Testing

// Runs for real on Mesa's llvmpipe (surfaceless, and the EGL device platform's software device).

@Suite("headless display with the GL renderer")
struct HeadlessGLTests {
    /// Plays `clip` to the end, untimed, on a headless display drawn by `renderer`.
    static func play(_ clip: String, on renderer: any HeadlessRenderer,
                     decoderOptions: DecoderOptions = DecoderOptions()) throws -> (HeadlessDisplay, PlaybackStats) {
        let display = HeadlessDisplay(renderer: renderer)
        let reader = try FrameReader(input: try Fixtures.path(clip), decoderOptions: decoderOptions)
        let stats = try PlaybackSession(reader: reader, display: display, timed: false).run()
        return (display, stats)
    }

    /// The last picture of `clip` as the CPU renderer draws it on a headless display.
    static func cpuPicture(_ clip: String) throws -> RGBImage {
        try #require(try play(clip, on: CPUHeadlessRenderer()).0.snapshot())
    }

    @Test("every frame presented, none read back; the picture read on demand agrees with the CPU renderer's within 3",
          arguments: [("counter.mp4", 96), ("rotated.mp4", 30), ("hevc10.mkv", 30)])
    func playsWithoutReadback(clip: String, frames: Int) throws {
        let (display, stats) = try Self.play(clip, on: GLHeadlessRenderer(gl: try GLRenderer()))
        #expect(stats.framesPresented == frames && stats.framesDropped == 0)
        #expect(display.framesPresented == frames)
        #expect(display.readbacks == 0)
        let picture = try #require(try display.snapshot())
        #expect(display.readbacks == 1)
        let reference = try Self.cpuPicture(clip)
        #expect(picture.width == reference.width && picture.height == reference.height)
        let d = try #require(picture.maxChannelDifference(reference))
        #expect(d <= 3, "\(clip): max channel difference \(d)")
        #expect(display.description == "headless \(reference.width)x\(reference.height)")
    }

    @Test("with an output size, the GL renderer draws at that size, the picture placed as on a screen")
    func outputSize() throws {
        let display = HeadlessDisplay(renderer: GLHeadlessRenderer(gl: try GLRenderer(), composition: Composition(background: RGBColor(r: 255, g: 0, b: 0))),
                                      outputWidth: 640, outputHeight: 360)
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        _ = try PlaybackSession(reader: reader, display: display, timed: false).run(shouldStop: { display.framesPresented >= 3 })
        #expect(display.lastDestination == PixelRect(x: 80, y: 0, width: 480, height: 360))
        let picture = try #require(try display.snapshot())
        #expect(picture.width == 640 && picture.height == 360 && display.readbacks == 1)
        // Pillarboxed on the background colour.
        #expect(Array(picture.bytes[0..<3]) == [255, 0, 0])
        #expect(Array(picture.bytes[(639 * 3)..<(640 * 3)]) == [255, 0, 0])
    }

    @Test("DMA-BUF frames (the VA-API stand-in) without EGL's import: CPU planes uploaded, the reason named, same picture")
    func surfacesUploaded() throws {
        let renderer = GLHeadlessRenderer(gl: try GLRenderer())
        let hw = DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: FaultPlan(standIn: true)))
        let (display, stats) = try Self.play("counter.mp4", on: renderer, decoderOptions: hw)
        #expect(stats.framesPresented == 96 && display.readbacks == 0)
        #expect(renderer.detail.contains("DMA-BUF frames uploaded from their CPU planes (the EGL display lacks EGL_EXT_image_dma_buf_import)"))
        #expect(renderer.gl.lastImportFallback == "EGL_EXT_image_dma_buf_import is missing on this display")
        let d = try #require(try display.snapshot()?.maxChannelDifference(try Self.cpuPicture("counter.mp4")))
        #expect(d <= 3)
    }

    @Test("the EGL device platform, forced, opens and renders the same picture")
    func devicePlatform() throws {
        let context = try EGLDisplayContext(options: .init(headlessPlatforms: [.device]))
        let choice = try #require(context.headlessChoice)
        #expect(choice.platform == .device && choice.passedOver.isEmpty)
        let device = try #require(choice.device)
        #expect(device.index < device.count)
        let renderer = GLHeadlessRenderer(gl: try GLRenderer(context: context))
        #expect(renderer.detail.contains("EGL device \(device.index) of \(device.count)"))
        let (display, stats) = try Self.play("counter.mp4", on: renderer)
        #expect(stats.framesPresented == 96 && display.readbacks == 0)
        let d = try #require(try display.snapshot()?.maxChannelDifference(try Self.cpuPicture("counter.mp4")))
        #expect(d <= 3)
    }

    @Test("--renderer auto keeps the CPU renderer on a software rasteriser, saying why; gl and cpu are taken as asked")
    func autoChoice() throws {
        let probe = try EGLDisplayContext()
        let auto = try HeadlessDisplay.makeRenderer(.auto)
        if probe.softwareRasterizer != nil {
            #expect(auto.renderer.name == "cpu")
            #expect(auto.line == "renderer: cpu (auto: GLES is \(probe.glRenderer), a software rasteriser; the CPU renderer is faster)")
        } else {
            #expect(auto.renderer.name == "gl" && auto.reason == "auto: GLES on hardware, \(probe.glRenderer)")
        }
        #expect(try HeadlessDisplay.makeRenderer(.gl).renderer.name == "gl")
        #expect(try HeadlessDisplay.makeRenderer(.cpu).line == "renderer: cpu (asked for)")
        // With no headless platform that opens, auto falls back to the CPU with the error.
        let none = try HeadlessDisplay.makeRenderer(.auto, eglOptions: .init(hiddenExtensions: ["EGL_KHR_surfaceless_context"]))
        #expect(none.renderer.name == "cpu" && none.reason.hasPrefix("auto: gl unavailable: EGL unavailable: no headless EGL platform opened (surfaceless: "))
    }
}
