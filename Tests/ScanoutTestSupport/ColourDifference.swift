import Foundation

/// CIEDE2000 colour differences between 8-bit BT.709 pictures, as a display shows them: the
/// signal through BT.1886's EOTF (`x^2.4`), BT.709 RGB to CIE XYZ, then CIELAB, both with D65.
/// A difference of 1 is about the smallest one an observer notices side by side.
public enum ColourDifference {
    /// CIELAB of an 8-bit BT.709 colour.
    public static func lab(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> (l: Double, a: Double, b: Double) {
        func linear(_ v: UInt8) -> Double { pow(Double(v) / 255, 2.4) }
        let (lr, lg, lb) = (linear(r), linear(g), linear(b))
        // BT.709 primaries, D65 white, RGB to XYZ.
        let x = 0.4123908 * lr + 0.3575843 * lg + 0.1804808 * lb
        let y = 0.2126390 * lr + 0.7151687 * lg + 0.0721923 * lb
        let z = 0.0193308 * lr + 0.1191948 * lg + 0.9505322 * lb
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        let (fx, fy, fz) = (f(x / 0.9504559), f(y), f(z / 1.0890578))
        return (116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))
    }

    /// CIEDE2000 (Sharma, Wu and Dalal's formulation) between two CIELAB colours.
    public static func deltaE2000(_ p: (l: Double, a: Double, b: Double), _ q: (l: Double, a: Double, b: Double)) -> Double {
        func deg(_ r: Double) -> Double { r * 180 / .pi }
        func rad(_ d: Double) -> Double { d * .pi / 180 }
        let c1 = hypot(p.a, p.b), c2 = hypot(q.a, q.b), cMean = (c1 + c2) / 2
        let c7 = pow(cMean, 7), g = 0.5 * (1 - (c7 / (c7 + pow(25, 7))).squareRoot())
        let a1 = (1 + g) * p.a, a2 = (1 + g) * q.a
        let c1p = hypot(a1, p.b), c2p = hypot(a2, q.b)
        func hue(_ b: Double, _ a: Double) -> Double { b == 0 && a == 0 ? 0 : (deg(atan2(b, a)) + 360).truncatingRemainder(dividingBy: 360) }
        let h1 = hue(p.b, a1), h2 = hue(q.b, a2)
        let dL = q.l - p.l, dC = c2p - c1p
        var dh = 0.0
        if c1p * c2p != 0 { dh = h2 - h1; if dh > 180 { dh -= 360 } else if dh < -180 { dh += 360 } }
        let dH = 2 * (c1p * c2p).squareRoot() * sin(rad(dh / 2))
        let lMean = (p.l + q.l) / 2, cpMean = (c1p + c2p) / 2
        var hMean = h1 + h2
        if c1p * c2p != 0 {
            hMean = abs(h1 - h2) <= 180 ? (h1 + h2) / 2 : (h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2)
        }
        let t = 1 - 0.17 * cos(rad(hMean - 30)) + 0.24 * cos(rad(2 * hMean)) + 0.32 * cos(rad(3 * hMean + 6)) - 0.20 * cos(rad(4 * hMean - 63))
        let dTheta = 30 * exp(-pow((hMean - 275) / 25, 2))
        let cp7 = pow(cpMean, 7), rc = 2 * (cp7 / (cp7 + pow(25, 7))).squareRoot()
        let sl = 1 + 0.015 * pow(lMean - 50, 2) / (20 + pow(lMean - 50, 2)).squareRoot()
        let sc = 1 + 0.045 * cpMean, sh = 1 + 0.015 * cpMean * t
        let rt = -sin(rad(2 * dTheta)) * rc
        return (pow(dL / sl, 2) + pow(dC / sc, 2) + pow(dH / sh, 2) + rt * (dC / sc) * (dH / sh)).squareRoot()
    }

    /// The difference at each pixel of two packed rgb24 pictures of the same size.
    public static func perPixel(_ a: [UInt8], _ b: [UInt8]) -> [Double] {
        precondition(a.count == b.count && a.count % 3 == 0, "ColourDifference: the pictures differ in size")
        return stride(from: 0, to: a.count, by: 3).map { i in
            deltaE2000(lab(a[i], a[i + 1], a[i + 2]), lab(b[i], b[i + 1], b[i + 2]))
        }
    }

    /// Mean, 99th percentile and maximum of a set of differences.
    public struct Summary: Sendable, CustomStringConvertible {
        public var mean: Double, p99: Double, max: Double
        public init(_ d: [Double]) {
            let sorted = d.sorted()
            mean = d.reduce(0, +) / Double(Swift.max(d.count, 1))
            p99 = sorted.isEmpty ? 0 : sorted[Swift.min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
            max = sorted.last ?? 0
        }
        public var description: String { String(format: "ΔE2000 mean %.3f, p99 %.3f, max %.3f", mean, p99, max) }
    }
}
