import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTesting
import ScanoutRender
import ScanoutTestSupport
import Testing

@Suite("overlays in playback: per item or global, on the CPU and GL headless renderers")
struct OverlayPlaybackTests {
    /// Plays item 0, then jumps to item 1, on a headless display drawn by `renderer`; returns the
    /// picture on screen after the first frame of each.
    static func play(_ items: [PlaylistItem], global: Overlay?, on renderer: any HeadlessRenderer) throws -> [RGBImage] {
        var configuration = PlayerConfiguration()
        configuration.overlay = global
        let display = HeadlessDisplay(renderer: renderer)
        let engine = PlayerEngine(display: display, configuration: configuration) { _ in }
        try engine.load(items)
        try engine.play()
        var pictures: [RGBImage] = []
        for i in items.indices {
            if i > 0 { try engine.jump(to: i) }
            let shown = display.framesPresented
            var ticks = 0
            while display.framesPresented == shown && ticks < 100 { engine.tick(); ticks += 1 }
            pictures.append(try #require(try display.snapshot()))
        }
        return pictures
    }

    @Test("the item's overlay replaces the global one for that item; the next item gets the global one; CPU and GL agree within 3")
    func perItemAndGlobal() throws {
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4")
        let logo = try makeLogoPNG(in: scratch)
        let global = try Overlay.load(path: logo, position: .corner(.topLeft, margin: 0), opacity: 1)
        let mine = try Overlay.load(path: logo, position: .corner(.bottomRight, margin: 4), opacity: 0.5)
        let items = [PlaylistItem(source: clip, overlay: mine), PlaylistItem(source: clip)]
        let cpu = try Self.play(items, global: global, on: CPUHeadlessRenderer())
        let gl = try Self.play(items, global: global, on: GLHeadlessRenderer(gl: try GLRenderer()))
        // Both items show the clip's first frame; the reference is that frame with nothing over it.
        let frame = VideoFrame()
        #expect(try FrameReader(input: clip).next(into: frame))
        let plain = try CPURenderer().render(frame)
        let (w, h) = (plain.width, plain.height)
        for (name, pictures, tolerance) in [("cpu", cpu, 0), ("gl", gl, 3)] {
            #expect(pictures.map(\.width) == [w, w] && pictures.map(\.height) == [h, h], "\(name)")
            func near(_ p: (r: UInt8, g: UInt8, b: UInt8), _ q: (UInt8, UInt8, UInt8)) -> Bool {
                abs(Int(p.r) - Int(q.0)) <= tolerance && abs(Int(p.g) - Int(q.1)) <= tolerance && abs(Int(p.b) - Int(q.2)) <= tolerance
            }
            let glSlack = name == "gl" ? 3 : 0
            func close(_ p: (r: UInt8, g: UInt8, b: UInt8), _ q: (r: UInt8, g: UInt8, b: UInt8)) -> Bool {
                abs(Int(p.r) - Int(q.r)) <= glSlack && abs(Int(p.g) - Int(q.g)) <= glSlack && abs(Int(p.b) - Int(q.b)) <= glSlack
            }
            // Item 0: its own logo at half opacity, bottom-right 4 pixels in; none top-left.
            let bx = w - 24, by = h - 14
            let v = plain.pixel(x: bx + 2, y: by + 2)
            let want = (blended(255, over: v.r, opacity: 0.5), blended(0, over: v.g, opacity: 0.5), blended(0, over: v.b, opacity: 0.5))
            #expect(near(pictures[0].pixel(x: bx + 2, y: by + 2), want), "\(name) item 0 logo: \(pictures[0].pixel(x: bx + 2, y: by + 2)) want \(want)")
            #expect(close(pictures[0].pixel(x: 2, y: 2), plain.pixel(x: 2, y: 2)), "\(name) item 0 top-left is video")
            // Item 1: the global logo, opaque, top-left; the bottom-right corner is video again.
            #expect(near(pictures[1].pixel(x: 2, y: 2), (255, 0, 0)), "\(name) item 1 global logo: \(pictures[1].pixel(x: 2, y: 2))")
            #expect(close(pictures[1].pixel(x: 12, y: 2), plain.pixel(x: 12, y: 2)), "\(name) the logo's transparent half is video")
            #expect(close(pictures[1].pixel(x: bx + 2, y: by + 2), plain.pixel(x: bx + 2, y: by + 2)), "\(name) item 1 bottom-right is video")
        }
        for i in 0..<2 {
            let d = try #require(cpu[i].maxChannelDifference(gl[i]))
            #expect(d <= 3, "item \(i): CPU vs GL max channel difference \(d)")
        }
    }
}
