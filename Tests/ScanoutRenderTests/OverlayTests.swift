import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport
import Testing

@Suite("overlay: position, opacity, and the same picture from both renderers")
struct OverlayTests {
    @Test("positions: X,Y and the four corners with a margin, resolved on the output's size; anything else refused")
    func positions() throws {
        func at(_ text: String) -> (Int, Int)? {
            OverlayPosition(text).map { let o = $0.origin(width: 20, height: 10, outputWidth: 320, outputHeight: 240); return (o.x, o.y) }
        }
        #expect(at("12,34")! == (12, 34))
        #expect(at("-5, 7")! == (-5, 7))
        #expect(at("top-left")! == (0, 0))
        #expect(at("top-right:8")! == (292, 8))
        #expect(at("bottom-left:4")! == (4, 226))
        #expect(at("bottom-right")! == (300, 230))
        #expect(at("bottom-right:16")! == (284, 214))
        for bad in ["middle", "top-left:-2", "top-left:x", "1,2,3", "1", "", "bottom-right:4:5"] {
            #expect(OverlayPosition(bad) == nil, "\(bad)")
        }
        #expect(OverlayPosition("bottom-right:16")!.description == "bottom-right:16")
        #expect(OverlayPosition("3,4")!.description == "3,4")
    }

    @Test("the logo PNG reads back as straight RGBA: opaque red, transparent")
    func readsLogo() throws {
        let scratch = try Scratch()
        let logo = try Overlay.load(path: try makeLogoPNG(in: scratch), position: .corner(.bottomRight, margin: 8), opacity: 0.5)
        #expect(logo.image.width == 20 && logo.image.height == 10)
        #expect(Array(logo.image.bytes[0..<4]) == [255, 0, 0, 255])
        #expect(logo.image.bytes[4 * 15 + 3] == 0)
    }

    /// The CPU compositor and the GLES renderer draw `frame` at its own size with `overlay`.
    static func bothRenderers(_ frame: VideoFrame, overlay: Overlay?) throws -> (cpu: RGBImage, gl: RGBImage) {
        let c = Composition(outputWidth: frame.width, outputHeight: frame.height, overlay: overlay)
        let cpu = try CPUCompositor().compose(frame, as: c, width: frame.width, height: frame.height)
        let gl = try GLRenderer().render(.frame(frame), as: c)
        return (cpu, gl)
    }

    @Test("CPU compositor and GLES: the same picture within 3 per channel; opacity and corner placement checked pixel by pixel",
          arguments: [1.0, 0.5, 0.25])
    func sameOnBothRenderers(opacity: Double) throws {
        let scratch = try Scratch()
        let (frame, _) = try decodeFrame(3, of: try Fixtures.path("counter.mp4"))
        let logo = try Overlay.load(path: try makeLogoPNG(in: scratch), position: .corner(.bottomRight, margin: 8), opacity: opacity)
        let plain = try Self.bothRenderers(frame, overlay: nil)
        let drawn = try Self.bothRenderers(frame, overlay: logo)
        let (w, h) = (frame.width, frame.height)
        #expect(drawn.cpu.width == w && drawn.gl.width == w && drawn.gl.height == h)
        let d = try #require(drawn.cpu.maxChannelDifference(drawn.gl))
        #expect(d <= 3, "CPU vs GL with the overlay: max channel difference \(d)")
        // The logo's 20x10 box: bottom-right, 8 pixels in.
        let x0 = w - 20 - 8, y0 = h - 10 - 8
        for (x, y) in [(x0, y0), (x0 + 9, y0 + 9), (x0 + 5, y0 + 4)] {
            let v = plain.cpu.pixel(x: x, y: y), c = drawn.cpu.pixel(x: x, y: y), g = drawn.gl.pixel(x: x, y: y)
            let want = (blended(255, over: v.r, opacity: opacity), blended(0, over: v.g, opacity: opacity), blended(0, over: v.b, opacity: opacity))
            #expect(c == want, "CPU at \(x),\(y): \(c), want \(want) over \(v)")
            #expect(abs(Int(g.r) - Int(want.0)) <= 3 && abs(Int(g.g) - Int(want.1)) <= 3 && abs(Int(g.b) - Int(want.2)) <= 3,
                    "GL at \(x),\(y): \(g), want \(want)")
        }
        // The transparent half, and the pixels just outside the box, are the video as it was.
        for (x, y) in [(x0 + 10, y0), (x0 + 19, y0 + 9), (x0 - 1, y0), (x0, y0 - 1), (x0 + 20, y0 + 5), (x0 + 5, y0 + 10)] {
            #expect(drawn.cpu.pixel(x: x, y: y) == plain.cpu.pixel(x: x, y: y), "CPU at \(x),\(y)")
        }
        // Nowhere else does the overlay change a byte.
        var inside = 0, outside = 0
        for y in 0..<h {
            for x in 0..<w where drawn.cpu.pixel(x: x, y: y) != plain.cpu.pixel(x: x, y: y) {
                if x >= x0 && x < x0 + 10 && y >= y0 && y < y0 + 10 { inside += 1 } else { outside += 1 }
            }
        }
        #expect(outside == 0 && inside > 0, "\(inside) pixels changed inside the opaque half, \(outside) outside it")
    }
}
