import Testing
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender

@Suite("Composition geometry")
struct GLGeometryTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var w: Int, h: Int, sar: Rational, o: Orientation, ow: Int, oh: Int, mode: ScalingMode, rect: PixelRect
        var testDescription: String { "\(w)x\(h) sar \(sar) \(o) → \(ow)x\(oh) \(mode.rawValue)" }
    }

    static let cases: [Case] = [
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 320, oh: 240, mode: .fit, rect: PixelRect(x: 0, y: 0, width: 320, height: 240)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 640, oh: 240, mode: .fit, rect: PixelRect(x: 160, y: 0, width: 320, height: 240)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 641, oh: 240, mode: .fit, rect: PixelRect(x: 160, y: 0, width: 320, height: 240)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 320, oh: 480, mode: .fit, rect: PixelRect(x: 0, y: 120, width: 320, height: 240)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 1920, oh: 1080, mode: .fit, rect: PixelRect(x: 240, y: 0, width: 1440, height: 1080)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 240, oh: 240, mode: .fill, rect: PixelRect(x: -40, y: 0, width: 320, height: 240)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 1920, oh: 1080, mode: .fill, rect: PixelRect(x: 0, y: -180, width: 1920, height: 1440)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 100, oh: 50, mode: .stretch, rect: PixelRect(x: 0, y: 0, width: 100, height: 50)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 100, oh: 100, mode: .none, rect: PixelRect(x: -110, y: -70, width: 320, height: 240)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: .identity, ow: 641, oh: 481, mode: .none, rect: PixelRect(x: 160, y: 120, width: 320, height: 240)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: Orientation(rotation: 90), ow: 320, oh: 240, mode: .fit, rect: PixelRect(x: 70, y: 0, width: 180, height: 240)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: Orientation(rotation: 270, mirrored: true), ow: 240, oh: 320, mode: .fit, rect: PixelRect(x: 0, y: 0, width: 240, height: 320)),
        Case(w: 320, h: 240, sar: Rational(1, 1), o: Orientation(rotation: 180), ow: 640, oh: 240, mode: .fit, rect: PixelRect(x: 160, y: 0, width: 320, height: 240)),
        Case(w: 320, h: 240, sar: Rational(4, 3), o: .identity, ow: 640, oh: 480, mode: .fit, rect: PixelRect(x: 0, y: 60, width: 640, height: 360)),
        Case(w: 320, h: 240, sar: Rational(4, 3), o: .identity, ow: 640, oh: 480, mode: .none, rect: PixelRect(x: 106, y: 120, width: 427, height: 240)),
        Case(w: 320, h: 240, sar: Rational(3, 4), o: .identity, ow: 640, oh: 480, mode: .fit, rect: PixelRect(x: 80, y: 0, width: 480, height: 480)),
        Case(w: 320, h: 240, sar: Rational(4, 3), o: Orientation(rotation: 90), ow: 480, oh: 640, mode: .fit, rect: PixelRect(x: 60, y: 0, width: 360, height: 640)),
        Case(w: 320, h: 240, sar: Rational(0, 1), o: .identity, ow: 320, oh: 240, mode: .fit, rect: PixelRect(x: 0, y: 0, width: 320, height: 240)),
    ]

    @Test("destination rectangles", arguments: cases)
    func destination(c: Case) {
        let r = Composition.destination(sourceWidth: c.w, sourceHeight: c.h, sampleAspectRatio: c.sar, orientation: c.o,
                                       outputWidth: c.ow, outputHeight: c.oh, mode: c.mode)
        #expect(r == c.rect)
    }

    @Test("natural size: SAR widens or heightens, quarter turns swap")
    func naturalSize() {
        #expect(Composition.naturalSize(width: 320, height: 240, sampleAspectRatio: Rational(4, 3), orientation: .identity) == (427, 240))
        #expect(Composition.naturalSize(width: 320, height: 240, sampleAspectRatio: Rational(3, 4), orientation: .identity) == (320, 320))
        #expect(Composition.naturalSize(width: 320, height: 240, sampleAspectRatio: Rational(4, 3), orientation: Orientation(rotation: 270)) == (240, 427))
        #expect(Composition.naturalSize(width: 720, height: 576, sampleAspectRatio: Rational(16, 15), orientation: .identity) == (768, 576))
    }

    /// The source map must agree with PlaneTransform (what the CPU renderer uses): output pixel
    /// (x, y)'s centre maps into the centre of the stored pixel PlaneTransform takes it from.
    @Test("source map of each orientation matches PlaneTransform pixel for pixel",
          arguments: [0, 90, 180, 270], [false, true])
    func sourceMap(rotation: Int, mirrored: Bool) {
        let o = Orientation(rotation: rotation, mirrored: mirrored)
        let (w, h) = (6, 4)
        let (ow, oh) = o.swapsDimensions ? (h, w) : (w, h)
        // Label each stored pixel with its index, turn with PlaneTransform, compare.
        let src = (0..<(w * h)).map { UInt8($0) }
        var dst = [UInt8](repeating: 0, count: w * h)
        src.withUnsafeBytes { s in dst.withUnsafeMutableBytes { d in
            PlaneTransform.apply(o, src: s.baseAddress!, srcStride: w, width: w, height: h, elementSize: 1, dst: d.baseAddress!, dstStride: ow)
        } }
        let m = Composition.sourceMap(rect: PixelRect(x: 0, y: 0, width: ow, height: oh), sourceWidth: w, sourceHeight: h, orientation: o)
        for y in 0..<oh {
            for x in 0..<ow {
                let fx = Double(x) + 0.5, fy = Double(y) + 0.5
                let sx = m[0] * fx + m[1] * fy + m[2], sy = m[3] * fx + m[4] * fy + m[5]
                #expect(abs(sx - sx.rounded(.down) - 0.5) < 1e-9 && abs(sy - sy.rounded(.down) - 0.5) < 1e-9)
                #expect(Int(sy) * w + Int(sx) == Int(dst[y * ow + x]), "(\(x), \(y)) → (\(sx), \(sy))")
            }
        }
    }

    @Test("background colours parse from RRGGBB")
    func colours() {
        #expect(RGBColor(hex: "FF8000") == RGBColor(r: 255, g: 128, b: 0))
        #expect(RGBColor(hex: "#0a0B0c") == RGBColor(r: 10, g: 11, b: 12))
        #expect(RGBColor(hex: "FFF") == nil)
        #expect(RGBColor(hex: "GG0000") == nil)
    }
}
