import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport
import Testing

/// The part `r` of `image` (rgb24), as an image of its own.
func crop(_ image: RGBImage, _ r: PixelRect) -> RGBImage {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(3 * r.width * r.height)
    for y in r.y..<(r.y + r.height) {
        let start = 3 * (y * image.width + r.x)
        bytes += image.bytes[start..<(start + 3 * r.width)]
    }
    return RGBImage(width: r.width, height: r.height, bytes: bytes)
}

@Suite("canvas: several pictures on one screen, by both compositors")
struct CanvasTests {
    /// Frames 0, 7, 14 and 21 of the counter clip (320x240, the frame number in its top band).
    static func frames() throws -> [VideoFrame] {
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        var out: [VideoFrame] = []
        for n in 0...21 {
            let f = VideoFrame()
            guard try reader.next(into: f) else { throw SupportError("counter.mp4 ended at \(n)") }
            if n % 7 == 0 { out.append(f) }
        }
        return out
    }

    static let quadrants = [PixelRect(x: 0, y: 0, width: 320, height: 180), PixelRect(x: 320, y: 0, width: 320, height: 180),
                            PixelRect(x: 0, y: 180, width: 320, height: 180), PixelRect(x: 320, y: 180, width: 320, height: 180)]

    @Test("a 2x2 canvas is, byte for byte, each zone's own composition placed in its quadrant; each shows its own frame")
    func twoByTwoIsItsZonesPlaced() throws {
        let frames = try Self.frames()
        let scalings: [ScalingMode] = [.fit, .fill, .stretch, .none]
        let zones = (0..<4).map { Canvas.Zone(rect: Self.quadrants[$0], composition: Composition(scaling: scalings[$0])) }
        let canvas = Canvas(width: 640, height: 360, background: RGBColor(r: 9, g: 9, b: 9), zones: zones)
        let cpu = CPUCompositor()
        let composed = try cpu.compose(frames.map { $0 }, on: canvas)
        #expect(composed.width == 640 && composed.height == 360)
        for (i, zone) in zones.enumerated() {
            let own = try cpu.compose(frames[i], as: zone.composition, width: zone.rect.width, height: zone.rect.height)
            let placed = crop(composed, zone.rect)
            #expect(placed.bytes == own.bytes, "zone \(i): \(firstDifference(own.bytes, placed.bytes))")
        }
        // Stretched, the frame's counter band fills the zone's width: zone 2 shows frame 14.
        #expect(frameCode(crop(composed, Self.quadrants[2])) == 14)
    }

    @Test("picture-in-picture: the inset over the main picture with its border; around it the main picture is untouched")
    func pictureInPicture() throws {
        let frames = try Self.frames()
        let main = Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 640, height: 480))
        let inset = Canvas.Zone(rect: PixelRect(x: 400, y: 300, width: 160, height: 120), border: Canvas.Border(width: 3, color: RGBColor(r: 255, g: 0, b: 0)))
        let canvas = Canvas(width: 640, height: 480, zones: [main, inset])
        let cpu = CPUCompositor()
        let composed = try cpu.compose([frames[0], frames[3]], on: canvas)
        let mainAlone = try cpu.compose(frames[0], as: Composition(), width: 640, height: 480)
        let insetAlone = try cpu.compose(frames[3], as: Composition(), width: 160, height: 120)
        // The border, then the inset's picture inside it.
        for (x, y) in [(400, 300), (559, 300), (400, 419), (559, 419), (402, 350), (480, 302), (557, 360), (480, 417)] {
            #expect(composed.pixel(x: x, y: y) == (255, 0, 0), "border at \(x),\(y)")
        }
        let inner = PixelRect(x: 403, y: 303, width: 154, height: 114)
        #expect(crop(composed, inner).bytes == crop(insetAlone, PixelRect(x: 3, y: 3, width: 154, height: 114)).bytes)
        // Outside the inset, the main picture as it is alone.
        for (x, y) in [(0, 0), (399, 300), (560, 420), (639, 479), (100, 400)] {
            #expect(composed.pixel(x: x, y: y) == mainAlone.pixel(x: x, y: y), "main at \(x),\(y)")
        }
        #expect(frameCode(crop(composed, PixelRect(x: 0, y: 0, width: 640, height: 240))) == 0)
    }

    @Test("a see-through zone is blended over what is under it, as an overlay of that opacity is; a zone off the canvas is clipped")
    func opacityAndClipping() throws {
        let frames = try Self.frames()
        let under = Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 320, height: 240))
        let half = Canvas.Zone(rect: PixelRect(x: 100, y: 60, width: 160, height: 120), opacity: 0.5)
        let off = Canvas.Zone(rect: PixelRect(x: 260, y: -40, width: 160, height: 120))
        let canvas = Canvas(width: 320, height: 240, zones: [under, half, off])
        let cpu = CPUCompositor()
        let composed = try cpu.compose([frames[0], frames[1], frames[2]], on: canvas)
        let below = try cpu.compose(frames[0], as: Composition(), width: 320, height: 240)
        let mid = try cpu.compose(frames[1], as: Composition(), width: 160, height: 120)
        for (x, y) in [(100, 60), (180, 120), (259, 179), (150, 70)] {
            let a = below.pixel(x: x, y: y), b = mid.pixel(x: x - 100, y: y - 60), got = composed.pixel(x: x, y: y)
            func mix(_ top: UInt8, _ bottom: UInt8) -> UInt8 {
                let alpha: Int = 128 * 255, full: Int = 255 * 255
                let sum: Int = Int(top) * alpha + Int(bottom) * (full - alpha) + full / 2
                return UInt8(sum / full)
            }
            #expect(got == (mix(b.r, a.r), mix(b.g, a.g), mix(b.b, a.b)), "blend at \(x),\(y)")
        }
        let clipped = try cpu.compose(frames[2], as: Composition(), width: 160, height: 120)
        #expect(crop(composed, PixelRect(x: 260, y: 0, width: 60, height: 80)).bytes == crop(clipped, PixelRect(x: 0, y: 40, width: 60, height: 80)).bytes)
    }

    @Test("a zone with no picture yet shows its background and its label")
    func zoneWithoutPicture() throws {
        let label = Overlay(image: RGBAImage(width: 4, height: 2, bytes: [UInt8](repeating: 255, count: 32)), position: .corner(.bottomLeft, margin: 2))
        let zone = Canvas.Zone(rect: PixelRect(x: 10, y: 10, width: 40, height: 30),
                               composition: Composition(background: RGBColor(r: 0, g: 0, b: 200), overlay: label))
        let canvas = Canvas(width: 64, height: 48, background: RGBColor(r: 1, g: 2, b: 3), zones: [zone])
        let composed = try CPUCompositor().compose([nil], on: canvas)
        #expect(composed.pixel(x: 0, y: 0) == (1, 2, 3))
        #expect(composed.pixel(x: 30, y: 20) == (0, 0, 200))
        #expect(composed.pixel(x: 12, y: 36) == (255, 255, 255) && composed.pixel(x: 15, y: 37) == (255, 255, 255))
        #expect(composed.pixel(x: 16, y: 37) == (0, 0, 200))
    }

    @Test("GLES draws the same canvas (2x2 scaled every way, an inset with a border, a see-through zone, an empty zone) as the CPU")
    func glAgreesWithCPU() throws {
        // Pictures scaled (swscale's taps in both), at their own size, cropped (`none`),
        // bordered, blended.
        let frames = try Self.frames()
        let quarters = [PixelRect(x: 0, y: 0, width: 213, height: 240), PixelRect(x: 213, y: 0, width: 427, height: 240),
                        PixelRect(x: 0, y: 240, width: 301, height: 240), PixelRect(x: 301, y: 240, width: 339, height: 240)]
        let modes: [ScalingMode] = [.fit, .fill, .stretch, .none]
        var zones = (0..<4).map { Canvas.Zone(rect: quarters[$0], composition: Composition(scaling: modes[$0])) }
        zones.append(Canvas.Zone(rect: PixelRect(x: 240, y: 180, width: 160, height: 120), composition: Composition(scaling: .none),
                                 border: Canvas.Border(width: 4, color: RGBColor(r: 0, g: 255, b: 0))))
        zones.append(Canvas.Zone(rect: PixelRect(x: 500, y: 20, width: 120, height: 90), composition: Composition(scaling: .none), opacity: 0.6))
        zones.append(Canvas.Zone(rect: PixelRect(x: -30, y: 400, width: 100, height: 100), composition: Composition(background: RGBColor(r: 200, g: 0, b: 0))))
        let logo = Overlay(image: RGBAImage(width: 8, height: 8, bytes: [UInt8](repeating: 200, count: 256)), position: .corner(.topRight, margin: 4))
        let canvas = Canvas(width: 640, height: 480, background: RGBColor(r: 20, g: 30, b: 40), zones: zones, overlays: [logo])
        let pictures: [VideoFrame?] = frames + [frames[1], frames[2], nil]
        let cpu = try CPUCompositor().compose(pictures, on: canvas)
        let gl = try GLRenderer()
        let drawn = try gl.render(pictures.map { $0.map { GLSource.frame($0) } }, on: canvas)
        #expect(drawn.width == 640 && drawn.height == 480)
        let diff = try #require(drawn.maxChannelDifference(cpu))
        #expect(diff <= 3, "\(firstDifference(cpu.bytes, drawn.bytes))")
        // The scaled zones byte for byte (the pictures at their own size, the blended zone and
        // the logo within rounding).
        let blended = [zones[3].rect, zones[4].rect, zones[5].rect, zones[6].rect, PixelRect(x: 628, y: 4, width: 8, height: 8)]
        func isBlended(_ x: Int, _ y: Int) -> Bool { blended.contains { x >= $0.x && x < $0.x + $0.width && y >= $0.y && y < $0.y + $0.height } }
        for y in 0..<480 {
            for x in 0..<640 where !isBlended(x, y) {
                let i = 3 * (y * 640 + x)
                if drawn.bytes[i..<(i + 3)] != cpu.bytes[i..<(i + 3)] {
                    Issue.record("(\(x), \(y)): \(drawn.pixel(x: x, y: y)) drawn, \(cpu.pixel(x: x, y: y)) composed")
                    return
                }
            }
        }
        // Into a target of the canvas's size, the same pixels; another size is refused.
        let target = try gl.makeTarget(width: 640, height: 480)
        try gl.render(pictures.map { $0.map { GLSource.frame($0) } }, on: canvas, into: target)
        #expect(try gl.read(target).bytes == drawn.bytes)
        #expect(throws: RenderError.self) { try gl.render([nil], on: canvas) }
        #expect(throws: RenderError.self) { try gl.render(pictures.map { _ in nil }, on: canvas, into: try gl.makeTarget(width: 64, height: 64)) }
    }
}

@Suite("canvas turned onto its output: portrait screens")
struct TurnedCanvasTests {
    /// A portrait canvas (240 wide, 320 high): two zones stacked, an inset, a logo in a corner;
    /// the pictures at their own size, cropped, where the two compositors agree within 3.
    static func portrait(turn: Orientation) -> Canvas {
        let logo = Overlay(image: RGBAImage(width: 6, height: 4, bytes: [UInt8](repeating: 230, count: 96)), position: .corner(.bottomRight, margin: 3))
        return Canvas(width: 240, height: 320, background: RGBColor(r: 5, g: 6, b: 7),
                      zones: [Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 240, height: 160), composition: Composition(scaling: .none)),
                              Canvas.Zone(rect: PixelRect(x: 0, y: 160, width: 240, height: 160), composition: Composition(scaling: .none)),
                              Canvas.Zone(rect: PixelRect(x: 150, y: 20, width: 80, height: 60), composition: Composition(scaling: .none),
                                          border: Canvas.Border(width: 2, color: RGBColor(r: 255, g: 255, b: 0)))],
                      overlays: [logo], turn: turn)
    }

    @Test("90°, 180° and 270°: the output is the upright canvas turned, pixel for pixel, by both compositors",
          arguments: [90, 180, 270])
    func turnedIsUprightTurned(rotation: Int) throws {
        let frames = try CanvasTests.frames()
        let pictures: [VideoFrame?] = [frames[0], frames[1], frames[2]]
        let turned = Self.portrait(turn: Orientation(rotation: rotation))
        let cpu = CPUCompositor()
        let upright = try cpu.compose(pictures, on: Self.portrait(turn: .identity))
        let out = try cpu.compose(pictures, on: turned)
        #expect(out.width == (rotation == 180 ? 240 : 320) && out.height == (rotation == 180 ? 320 : 240))
        #expect(out.bytes == upright.oriented(Orientation(rotation: rotation)).bytes)
        let gl = try GLRenderer()
        let sources = pictures.map { $0.map { GLSource.frame($0) } }
        let glUpright = try gl.render(sources, on: Self.portrait(turn: .identity))
        let glOut = try gl.render(sources, on: turned)
        #expect(glOut.bytes == glUpright.oriented(Orientation(rotation: rotation)).bytes)
        #expect(try #require(glOut.maxChannelDifference(out)) <= 3)
    }
}
