import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport
import Testing

@Suite("text zones: a still line and a ticker, drawn with libass")
struct TextZoneTests {
    @Test("still text is centred in the zone, in its colour")
    func still() throws {
        let zone = try TextZone(ZoneText(text: "Doors open 19:30", size: 40, color: RGBColor(r: 255, g: 200, b: 0)), width: 640, height: 80)
        let layer = try #require(zone.layer(at: 0))
        let at = layer.origin(outputWidth: 640, outputHeight: 80)
        // Centred by the line's box (advance, ascent and descent): the ink sits within a few pixels of the middle.
        #expect(abs(at.x + layer.image.width / 2 - 320) <= 10 && abs(at.y + layer.image.height / 2 - 40) <= 8, "\(at) \(layer.image.width)")
        #expect(zone.period == nil && zone.textWidth > 200)
        // The most opaque pixel has the text's colour.
        let px = stride(from: 0, to: layer.image.bytes.count, by: 4).max { layer.image.bytes[$0 + 3] < layer.image.bytes[$1 + 3] }!
        #expect(Array(layer.image.bytes[px..<(px + 4)]) == [255, 200, 0, 255])
        #expect(zone.layer(at: 100) == layer)
    }

    @Test("placement: a label along the bottom edge, a line along the top; a ticker along the bottom keeps its pace")
    func placements() throws {
        func box(_ placement: ZoneText.Placement, scroll: Double = 0) throws -> (top: Int, bottom: Int) {
            let zone = try TextZone(ZoneText(text: "Channel 7", size: 24, scroll: scroll, placement: placement), width: 320, height: 240)
            let layer = try #require(zone.layer(at: 0.5))
            let y = layer.origin(outputWidth: 320, outputHeight: 240).y
            // The rows with ink in them.
            let w = layer.image.width
            let inked = (0..<layer.image.height).filter { r in (0..<w).contains { layer.image.bytes[4 * (r * w + $0) + 3] > 0 } }
            return (y + (inked.first ?? 0), y + (inked.last ?? 0) + 1)
        }
        let bottom = try box(.bottom), top = try box(.top), middle = try box(.center)
        // 6 pixels of margin (a quarter of the size) from the edge, the line's box (its descent
        // below the ink) within it: the ink in the bottom (top) 40 pixels, clear of the edge.
        #expect(bottom.bottom <= 240 - 6 && bottom.top >= 240 - 40, "\(bottom)")
        #expect(top.top >= 6 && top.bottom <= 40, "\(top)")
        #expect(abs((middle.top + middle.bottom) / 2 - 120) <= 8, "\(middle)")
        let ticker = try box(.bottom, scroll: 100)
        #expect(ticker.bottom <= 240 - 6 && ticker.top >= 240 - 40, "\(ticker)")
    }

    @Test("a ticker at 200 px/s: in at the right edge at 0, 200 px further left each second, again after its period")
    func ticker() throws {
        let zone = try TextZone(ZoneText(text: "Breaking: the ticker scrolls", size: 32, scroll: 200), width: 800, height: 60)
        let period = try #require(zone.period)
        #expect(abs(period - Double(800 + zone.textWidth) / 200) < 1e-9)
        func left(_ t: Double) throws -> Int { try #require(zone.layer(at: t)).origin(outputWidth: 800, outputHeight: 60).x }
        let a = try left(0.5), b = try left(1.5), c = try left(2.5)
        #expect(abs(a - (800 - 100)) <= 3, "\(a)")
        #expect(abs((a - b) - 200) <= 1 && abs((b - c) - 200) <= 1, "\(a) \(b) \(c)")
        #expect(zone.layer(at: 0.5 + period) == zone.layer(at: 0.5))
        // Gone past the left edge just before the period ends.
        #expect(zone.layer(at: period - 0.001) == nil)
    }

    @Test("a text zone on a canvas: GLES blends its layer within 1 of the CPU")
    func onACanvas() throws {
        let zone = try TextZone(ZoneText(text: "Gate 12", size: 36, scroll: 0), width: 320, height: 60)
        var c = Composition(background: RGBColor(r: 0, g: 0, b: 80))
        c.overlay = zone.layer(at: 0)
        let canvas = Canvas(width: 320, height: 120, zones: [Canvas.Zone(rect: PixelRect(x: 0, y: 30, width: 320, height: 60), composition: c)])
        let cpu = try CPUCompositor().compose([nil], on: canvas)
        let gl = try GLRenderer().render([nil], on: canvas)
        #expect(try #require(gl.maxChannelDifference(cpu)) <= 1)
        #expect(cpu.pixel(x: 5, y: 5) == (0, 0, 0) && cpu.pixel(x: 5, y: 35) == (0, 0, 80))
    }
}
