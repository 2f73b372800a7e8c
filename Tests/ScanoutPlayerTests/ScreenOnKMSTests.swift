#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ScanoutCore
import ScanoutDecode
import ScanoutDisplay
import ScanoutKMS
import ScanoutPlayer
import ScanoutRender
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// The frame of `clip` that shows `number` in its band (decoded from the start).
private func frame(_ number: Int, of clip: String) throws -> VideoFrame {
    let reader = try FrameReader(input: clip)
    let f = VideoFrame()
    while try reader.next(into: f) {
        if frameCode(f) == number { return f.clone() }
    }
    throw SupportError("\(clip) has no frame \(number)")
}

/// What the screen's opener made on the compositor's thread, and the threads that opened the
/// display and drew into it, read by the test once the screen has stopped. `@unchecked Sendable`:
/// written on the compositor's thread only (the opener, then the draws), read after
/// `ScreenPlayer.shutdown` returned.
private final class Opened: @unchecked Sendable {
    var display: KMSDisplay?
    var renderer: MemoryScanoutRenderer?
    var opener: pthread_t?
    var drawers: Set<pthread_t> = []
}

@Suite("a screen of zones on a KMS display")
struct ScreenOnKMSTests {
    @Test("2x2 on the fake device: the output opened on the compositor's thread, each quadrant of the screen's buffer its own clip's frame")
    func twoByTwoOnTheFakeDevice() throws {
        let clips = try ["counter.mp4", "bt709.mp4", "fullrange.mp4", "vp9.webm"].map { try Fixtures.path($0) }
        let corners: [(ScreenLayout.Length, ScreenLayout.Length)] = [(.pixels(0), .pixels(0)), (.fraction(0.5), .pixels(0)),
                                                                    (.pixels(0), .fraction(0.5)), (.fraction(0.5), .fraction(0.5))]
        let zones = zip(corners, clips).enumerated().map { i, z in
            ScreenLayout.Zone(id: "z\(i)", x: z.0.0, y: z.0.1, width: .fraction(0.5), height: .fraction(0.5), playlist: [PlaylistItem(source: z.1)])
        }
        let device = FakeKMSDevice.oneMode(width: 640, height: 480)
        let opened = Opened()
        var c = PlayerConfiguration()
        c.audio.device = "none"
        let screen = try ScreenPlayer(layout: ScreenLayout(zones: zones), configuration: c) {
            let renderer = MemoryScanoutRenderer()
            renderer.onDraw = { opened.drawers.insert(pthread_self()) }
            let display = try KMSDisplay(device: device, renderer: renderer)
            try display.lightUp()
            opened.display = display
            opened.renderer = renderer
            opened.opener = pthread_self()
            return ScreenOutput(output: display, width: 640, height: 480)
        }
        // Every zone shows a few frames of its own.
        let deadline = Date().addingTimeInterval(20)
        while screen.players.contains(where: { $0.snapshot.framesPresented < 5 }), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        screen.shutdown()
        #expect(screen.error == nil)
        // Opened, and every canvas drawn, on one thread: the compositor's, not the caller's.
        #expect(opened.opener != nil && opened.drawers == [opened.opener!] && opened.opener != pthread_self())
        let display = try #require(opened.display), renderer = try #require(opened.renderer)
        #expect(display.counters.composited == screen.screen.composed && display.counters.composited > 3)
        // The zones pace themselves on the screen's vblanks, not the display itself.
        #expect(screen.screen.zones.allSatisfy { $0.vblankSource is ScreenVBlanks })
        // The last composed buffer: the zones' frames, each in its quadrant, drawn as the canvas says.
        let shown = try renderer.read(try #require(display.shownBuffer(named: "HDMI-A-1")))
        let canvas = try #require(renderer.lastCanvas)
        #expect(canvas.zones.map(\.rect) == [PixelRect(x: 0, y: 0, width: 320, height: 240), PixelRect(x: 320, y: 0, width: 320, height: 240),
                                             PixelRect(x: 0, y: 240, width: 320, height: 240), PixelRect(x: 320, y: 240, width: 320, height: 240)])
        let numbers = canvas.zones.map { bandCode(shown, in: $0.rect) }
        let frames = try zip(numbers, clips).map { try frame($0, of: $1) }
        #expect(shown == (try CPUCompositor().compose(frames, on: canvas)), "frames \(numbers)")
        // Each clip's frame differs from the others' of the same number (colour matrix, range,
        // codec): a quadrant showing another zone's clip would not match.
        let swapped = try frame(numbers[1], of: clips[0])
        #expect(try CPUCompositor().compose([frames[0], swapped, frames[2], frames[3]], on: canvas) != shown)
    }

    @Test("an output that fails to open: the error thrown from init, no player started")
    func anOpeningErrorIsThrown() throws {
        struct NoScreen: Error, Equatable {}
        let layout = ScreenLayout(zones: [ScreenLayout.Zone(id: "a", playlist: [PlaylistItem(source: try Fixtures.path("counter.mp4"))])])
        #expect(throws: NoScreen()) {
            _ = try ScreenPlayer(layout: layout) { throw NoScreen() }
        }
    }

    @Test("a layout of its own size on a mode of another shape: scaled in whole, centred, zones side by side still side by side")
    func aLayoutIsFittedToTheMode() {
        let layout = ScreenLayout(width: 1920, height: 1080, zones: [
            ScreenLayout.Zone(id: "left", width: .fraction(0.5), border: Canvas.Border(width: 4, color: .black)),
            ScreenLayout.Zone(id: "right", x: .fraction(0.5), width: .fraction(0.5)),
        ])
        let fitted = layout.fitted(outputWidth: 640, outputHeight: 480)
        #expect(fitted.width == 640 && fitted.height == 480)
        let canvas = fitted.canvas(outputWidth: 640, outputHeight: 480)
        // 1920x1080 scaled by 1/3 to 640x360, 60 pixels of background above and below.
        #expect(canvas.zones.map(\.rect) == [PixelRect(x: 0, y: 60, width: 320, height: 360), PixelRect(x: 320, y: 60, width: 320, height: 360)])
        #expect(canvas.zones[0].border?.width == 1)
        // A portrait layout on a landscape mode: the canvas is the mode turned upright.
        let portrait = ScreenLayout(width: 1080, height: 1920, rotation: 90, zones: [ScreenLayout.Zone(id: "all")])
        let turned = portrait.fitted(outputWidth: 640, outputHeight: 480).canvas(outputWidth: 640, outputHeight: 480)
        #expect(turned.width == 480 && turned.height == 640 && turned.outputSize == (640, 480))
        #expect(turned.zones[0].rect == PixelRect(x: 60, y: 0, width: 360, height: 640))
        // A layout without a size of its own, or of the output's, is itself.
        #expect(ScreenLayout(zones: layout.zones).fitted(outputWidth: 640, outputHeight: 480) == ScreenLayout(zones: layout.zones))
    }
}
