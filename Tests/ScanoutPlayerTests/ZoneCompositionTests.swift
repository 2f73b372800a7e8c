import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutDisplay
import ScanoutPlayer
import ScanoutRender
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// The frame number a counter picture shows in its top band, read from `image` in `rect`
/// (a zone at the clip's own size: bit b is the 32-pixel block b, white = 1, 16 rows down).
func bandCode(_ image: RGBImage, in rect: PixelRect) -> Int {
    var n = 0
    for bit in 0..<10 where bit * 32 + 16 < rect.width {
        let p = image.pixel(x: rect.x + bit * 32 + 16, y: rect.y + 16)
        if (Int(p.r) + Int(p.g) + Int(p.b)) / 3 > 128 { n |= 1 << bit }
    }
    return n
}

/// Zone players, each presenting into its surface of one screen. Each runs on a manual clock
/// of its own, as each runs on a thread of its own in a service (a player sleeps on its clock
/// until its next frame is due); the clocks are moved together.
private final class Zones {
    var clocks: [ManualClock] = []
    let screen: CanvasScreen
    let output: HeadlessCanvasOutput
    var engines: [PlayerEngine] = []
    /// The time all the clocks have reached.
    private(set) var now = ClockTime(nanoseconds: 1_000_000_000)

    init(canvas: Canvas, output: HeadlessCanvasOutput = HeadlessCanvasOutput()) {
        self.output = output
        screen = CanvasScreen(canvas: canvas, output: output)
        for surface in screen.zones {
            let clock = ManualClock(start: now)
            clocks.append(clock)
            engines.append(PlayerEngine(display: surface, clock: clock) { _ in })
        }
    }

    /// Runs the players of `zones` (all: nil) for `seconds`: each ticks until its clock has
    /// passed the time, in steps of 10 ms; a player whose zone is left out is not run at all.
    func play(for seconds: Double, zones: [Int]? = nil) {
        let end = now + .nanoseconds(inSeconds: seconds)
        while now < end {
            now += .milliseconds(10)
            for (i, e) in engines.enumerated() {
                guard zones?.contains(i) ?? true else { clocks[i].time = max(clocks[i].time, now); continue }
                var ticks = 0
                while clocks[i].time < now && ticks < 100 {
                    e.tick()
                    ticks += 1
                }
                clocks[i].time = max(clocks[i].time, now)
            }
        }
    }

    /// What each zone shows now, by its counter band on the composed picture.
    func shownCodes() throws -> [Int] {
        try screen.compose()
        let image = try #require(try output.snapshot())
        return screen.canvas.zones.map { bandCode(image, in: $0.rect) }
    }

    /// The frame number each zone's player presented last.
    var presentedCodes: [Int] {
        screen.zones.map { $0.current().frame.map(frameCode) ?? -1 }
    }
}

@Suite("zones: players presenting into one composed screen")
struct ZoneCompositionTests {
    static let quadrants = [PixelRect(x: 0, y: 0, width: 320, height: 240), PixelRect(x: 320, y: 0, width: 320, height: 240),
                            PixelRect(x: 0, y: 240, width: 320, height: 240), PixelRect(x: 320, y: 240, width: 320, height: 240)]

    @Test("2x2, each zone its own timeline: every composed frame shows, in each quadrant, the frame that zone's player presented last",
          arguments: [false, true])
    func twoByTwo(gl: Bool) throws {
        let canvas = Canvas(width: 640, height: 480, zones: Self.quadrants.map { Canvas.Zone(rect: $0) })
        let z = Zones(canvas: canvas, output: gl ? HeadlessCanvasOutput(gl: try GLRenderer()) : HeadlessCanvasOutput())
        let clip = try Fixtures.path("counter.mp4")
        for (i, e) in z.engines.enumerated() {
            try e.load([PlaylistItem(source: clip)])
            if i > 0 { try e.seek(to: Double(i) * 0.75, exact: true) }
        }
        for e in z.engines { try e.play() }
        var seen: [[Int]] = []
        for _ in 0..<4 {
            z.play(for: 0.2)
            let shown = try z.shownCodes()
            #expect(shown == z.presentedCodes)
            seen.append(shown)
        }
        // Each zone went on from where it started: 30 frames a second, 0, 0.75, 1.5 and 2.25 s apart.
        let last = try #require(seen.last)
        // (Each player may be one frame ahead of the others: it presents its next frame when its
        // clock reaches that frame's time, which may lie just past the step.)
        for (zone, apart) in [(1, 22), (2, 45), (3, 67)] { #expect(abs(last[zone] - last[0] - apart) <= 1, "\(seen)") }
        #expect(seen.first![0] < last[0])
    }

    @Test("a zone whose player stops keeps its last frame and holds no other zone back")
    func aStalledZoneKeepsItsFrame() throws {
        let canvas = Canvas(width: 640, height: 240, zones: Array(Self.quadrants.prefix(2)).map { Canvas.Zone(rect: $0) })
        let z = Zones(canvas: canvas)
        let clip = try Fixtures.path("counter.mp4")
        for e in z.engines { try e.load([PlaylistItem(source: clip)]); try e.play() }
        z.play(for: 0.3)
        let before = try z.shownCodes()
        z.play(for: 0.5, zones: [0])
        let after = try z.shownCodes()
        #expect(after[1] == before[1])
        #expect(after[0] - before[0] == 15, "\(before) then \(after)")
        #expect(z.engines[0].session.currentStats().framesDropped == 0)
    }

    @Test("picture-in-picture moved, resized and swapped between two composes: both players go on, no frame dropped")
    func pictureInPictureMoves() throws {
        var canvas = Canvas(width: 640, height: 480, zones: [Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 640, height: 480), composition: Composition(scaling: .none)),
                                                              Canvas.Zone(rect: PixelRect(x: 300, y: 220, width: 320, height: 240), composition: Composition(scaling: .none),
                                                                          border: Canvas.Border(width: 2, color: RGBColor(r: 255, g: 255, b: 255)))])
        let z = Zones(canvas: canvas)
        let clip = try Fixtures.path("counter.mp4")
        for (i, e) in z.engines.enumerated() {
            try e.load([PlaylistItem(source: clip)])
            if i == 1 { try e.seek(to: 2, exact: true) }
            try e.play()
        }
        z.play(for: 0.2)
        let presentedBefore = z.screen.zones.map { $0.current().presented }
        canvas.zones[1].rect = PixelRect(x: 10, y: 10, width: 320, height: 240)
        try z.screen.relayout(canvas)
        z.play(for: 0.2)
        let image = try #require(try { try z.screen.compose(); return try z.output.snapshot() }())
        // The inset at its new place, showing its own player's frame, its border around it.
        #expect(bandCode(image, in: PixelRect(x: 10, y: 10, width: 320, height: 240)) == z.presentedCodes[1])
        #expect(image.pixel(x: 10, y: 10) == (255, 255, 255))
        canvas.zones.swapAt(0, 1)
        #expect(throws: Never.self) { try z.screen.relayout(canvas) }
        z.play(for: 0.2)
        let presentedAfter = z.screen.zones.map { $0.current().presented }
        #expect(zip(presentedBefore, presentedAfter).allSatisfy { $1 - $0 >= 11 })
        #expect(z.engines.allSatisfy { $0.session.currentStats().framesDropped == 0 })
        #expect(throws: RenderError.self) { try z.screen.relayout(Canvas(width: 640, height: 480)) }
    }
}
