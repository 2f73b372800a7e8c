import Foundation
import ScanoutDemux

/// A curve that brings HDR highlights into SDR's range. Each takes the brightest component of a
/// pixel in linear light (1 = reference white, 100 cd/m²) and the signal's peak in the same unit,
/// and gives the value to scale that pixel to (1 = SDR white); the pixel's three components are
/// scaled by the same factor, so hues keep their ratios.
///
/// The first five are FFmpeg's `tonemap` filter's (libavfilter 8, FFmpeg 5.1), with its default
/// parameters, so that `zscale,tonemap=NAME:desat=0,zscale` is their reference.
public enum ToneCurve: String, Sendable, CaseIterable {
    /// John Hable's filmic curve ("Uncharted 2"), normalised so the peak lands on white: a soft
    /// toe and shoulder; mid-tones darker than the others. The default (see `ToneMapping`).
    case hable
    /// Linear up to 0.3, then a Möbius transform that reaches white at the peak: mid-tones and
    /// colours kept as graded, highlights compressed hard.
    case mobius
    /// `x / (x + 1)` scaled so the peak lands on white.
    case reinhard
    /// Hard clip at white: everything above reference white is lost.
    case clip
    /// The whole range scaled down so the peak lands on white (dark for bright-peaked content).
    case linear
    /// ITU-R BT.2390's EETF: identity below a knee, a Hermite spline above it up to the peak,
    /// done in PQ space, for a 100 cd/m² target display.
    case bt2390

    /// The value to scale a pixel to whose brightest component is `x`, for a signal peaking at
    /// `peak` (both in units of reference white).
    public func map(_ x: Double, peak: Double) -> Double {
        switch self {
        case .hable: return Self.hable(x) / Self.hable(peak)
        case .mobius: return Self.mobius(x, knee: 0.3, peak: peak)
        case .reinhard: return x / (x + 1) * (peak + 1) / peak
        case .clip: return min(max(x, 0), 1)
        case .linear: return x / peak
        case .bt2390: return Self.bt2390(x, peak: peak)
        }
    }

    /// Hable's rational curve with his published constants.
    static func hable(_ x: Double) -> Double {
        let a = 0.15, b = 0.50, c = 0.10, d = 0.20, e = 0.02, f = 0.30
        return (x * (x * a + b * c) + d * e) / (x * (x * a + b) + d * f) - e / f
    }

    /// Identity up to `knee`; above it `(x + p) / (x + q)` scaled, the one Möbius transform that
    /// is continuous with slope 1 at the knee and reaches 1 at `peak`.
    static func mobius(_ x: Double, knee j: Double, peak: Double) -> Double {
        guard x > j else { return x }
        let m = mobiusConstants(knee: j, peak: peak)
        return m.scale * (x + m.p) / (x + m.q)
    }

    /// The Möbius transform's constants for `knee` and `peak`: `scale · (x + p) / (x + q)`.
    static func mobiusConstants(knee j: Double, peak: Double) -> (p: Double, q: Double, scale: Double) {
        let p = -j * j * (peak - 1) / (j * j - 2 * j + peak)
        let q = (j * j - 2 * j * peak + peak) / max(peak - 1, 1e-6)
        return (p, q, (q * q + 2 * q * j + j * j) / (q - p))
    }

    /// BT.2390's EETF (its section 5.4) from a `peak` display to a 100 cd/m² one, black at 0 on
    /// both: in PQ code values relative to the peak's, unchanged below the knee `1.5·m − 0.5`
    /// (m: the target's peak relative to the source's), a Hermite spline from there to m.
    static func bt2390(_ x: Double, peak: Double) -> Double {
        guard peak > 1 else { return min(max(x, 0), 1) }
        let (sourcePQ, maxLum, knee) = bt2390Constants(peak: peak)
        let e1 = min(HDRTransfer.pq(nits: max(x, 0) * HDRTransfer.referenceWhite) / sourcePQ, 1)
        var e2 = e1
        if e1 > knee {
            let t = (e1 - knee) / (1 - knee), t2 = t * t, t3 = t2 * t
            e2 = (2 * t3 - 3 * t2 + 1) * knee + (t3 - 2 * t2 + t) * (1 - knee) + (-2 * t3 + 3 * t2) * maxLum
        }
        return HDRTransfer.nits(pq: e2 * sourcePQ) / HDRTransfer.referenceWhite
    }

    /// BT.2390's constants for `peak`: the peak's PQ code, the target's (100 cd/m²) relative to
    /// it, and the knee.
    static func bt2390Constants(peak: Double) -> (sourcePQ: Double, maxLum: Double, knee: Double) {
        let sourcePQ = HDRTransfer.pq(nits: peak * HDRTransfer.referenceWhite)
        let maxLum = HDRTransfer.pq(nits: HDRTransfer.referenceWhite) / sourcePQ
        return (sourcePQ, maxLum, 1.5 * maxLum - 0.5)
    }
}

/// How HDR pictures are brought to SDR (BT.709 primaries and transfer): the curve, and what
/// FFmpeg's `tonemap` filter lets be set beside it.
///
/// The default curve is `hable`: it is what the common `zscale,tonemap=hable` chain uses, it
/// rolls highlights off without clipping them, and it keeps the picture's contrast where
/// `mobius` and `reinhard` look flat or washed out on content mastered at 1000 cd/m² and more.
public struct ToneMapping: Sendable, Equatable {
    public var curve: ToneCurve
    /// The signal's peak in cd/m²; nil: the frame's (`signalPeak`).
    public var peak: Double?
    /// FFmpeg's `desat`: pixels brighter than this (in units of reference white) are pulled
    /// toward their BT.709 luma, so that highlights turn white rather than saturated; nil: off
    /// (FFmpeg's filter defaults to 2).
    public var desaturation: Double?

    public init(curve: ToneCurve = .hable, peak: Double? = nil, desaturation: Double? = nil) {
        self.curve = curve
        self.peak = peak
        self.desaturation = desaturation
    }

    /// `hable`, the frame's peak, no desaturation.
    public static let `default` = ToneMapping()

    /// The peak of a signal in cd/m², as FFmpeg's `tonemap` filter finds it: the content's MaxCLL,
    /// else its mastering display's maximum luminance, else the transfer's own (10000 cd/m² for
    /// PQ, 1000 for HLG's reference display).
    public static func signalPeak(transfer: ColorTransfer, contentLightLevel: ContentLightLevel?,
                                  masteringDisplay: MasteringDisplay?) -> Double {
        if let cll = contentLightLevel?.maxCLL, cll > 0 { return Double(cll) }
        if let max = masteringDisplay?.maxLuminance, max > 0 { return max }
        return transfer == .pq ? 10000 : 1000
    }
}

/// The transfer functions tone mapping uses, each as zimg (FFmpeg's `zscale`) evaluates it,
/// display-referred, with reference white at `referenceWhite` cd/m² (zscale's `npl=100`).
public enum HDRTransfer {
    /// SDR white and the unit of linear light here, in cd/m².
    public static let referenceWhite = 100.0

    static let m1 = 0.1593017578125, m2 = 78.84375
    static let c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875

    /// SMPTE ST 2084's EOTF: a PQ code value in [0, 1] to cd/m² (10000 at 1).
    public static func nits(pq e: Double) -> Double {
        guard e > 0 else { return 0 }
        let p = pow(e, 1 / m2)
        return 10000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// The inverse of `nits(pq:)`.
    public static func pq(nits: Double) -> Double {
        guard nits > 0 else { return 0 }
        let y = pow(nits / 10000, m1)
        return pow((c1 + c2 * y) / (1 + c3 * y), m2)
    }

    /// ARIB STD-B67 (HLG) to display light in units of reference white, as zscale does by
    /// default (its approximate gamma): the inverse OETF, then the OOTF's 1.2 power per
    /// component, for HLG's 1000 cd/m² reference display.
    public static func hlgDisplay(_ e: Double) -> Double {
        let a = 0.17883277, b = 0.28466892, c = 0.55991073
        let x = max(e, 0)
        let scene = x <= 0.5 ? x * x / 3 : (exp((x - c) / a) + b) / 12
        return pow(scene, 1.2) * 1000 / referenceWhite
    }

    /// ARIB STD-B67 (BT.2100 HLG) OETF: scene light (0...1) to signal.
    public static func hlg(scene e: Double) -> Double {
        let a = 0.17883277, b = 0.28466892, c = 0.55991073
        return e <= 1.0 / 12 ? (3 * max(e, 0)).squareRoot() : a * log(12 * e - b) + c
    }

    /// Linear light (1 = white) to a BT.709 signal as zscale writes one by default: the inverse
    /// of BT.1886's EOTF for an ideal display, `x^(1/2.4)`; 0 below 0.
    public static func bt709Signal(_ x: Double) -> Double {
        x <= 0 ? 0 : pow(x, 1 / 2.4)
    }

    /// The linear-light matrix from `source` primaries to BT.709's, row-major (both D65, so no
    /// white-point adaptation). Unknown primaries are taken as BT.2020, HDR's.
    public static func matrixToBT709(from source: ColorPrimaries) -> [Double] {
        matrix(from: source, to: .bt709)
    }

    /// The linear-light matrix from `source` primaries to `target`'s, row-major (both D65).
    public static func matrix(from source: ColorPrimaries, to target: ColorPrimaries) -> [Double] {
        multiply(invert(Primaries.of(target).rgbToXYZ), Primaries.of(source).rgbToXYZ)
    }
}

/// Chromaticities of a set of primaries with the D65 white point.
struct Primaries {
    var red: (Double, Double), green: (Double, Double), blue: (Double, Double)
    static let white = (0.3127, 0.3290)

    static let bt709 = Primaries(red: (0.640, 0.330), green: (0.300, 0.600), blue: (0.150, 0.060))
    static let bt2020 = Primaries(red: (0.708, 0.292), green: (0.170, 0.797), blue: (0.131, 0.046))
    /// SMPTE EG 432-1, Display P3 with D65.
    static let p3 = Primaries(red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060))

    static func of(_ p: ColorPrimaries) -> Primaries {
        switch p {
        case .bt709: return .bt709
        case ColorPrimaries(rawValue: 12): return .p3  // AVCOL_PRI_SMPTE432
        default: return .bt2020
        }
    }

    /// RGB to CIE XYZ, row-major: each primary's XYZ scaled so that RGB (1, 1, 1) is the white.
    var rgbToXYZ: [Double] {
        func xyz(_ c: (Double, Double)) -> [Double] { [c.0 / c.1, 1, (1 - c.0 - c.1) / c.1] }
        let r = xyz(red), g = xyz(green), b = xyz(blue), w = xyz(Self.white)
        let columns = [r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]]
        let s = apply(invert(columns), w)
        return (0..<9).map { columns[$0] * s[$0 % 3] }
    }
}

/// `a · b` for row-major 3×3 matrices.
func multiply(_ a: [Double], _ b: [Double]) -> [Double] {
    var m = [Double](repeating: 0, count: 9)
    for r in 0..<3 {
        for c in 0..<3 {
            for k in 0..<3 { m[3 * r + c] += a[3 * r + k] * b[3 * k + c] }
        }
    }
    return m
}

/// `m · v` for a row-major 3×3 matrix.
func apply(_ m: [Double], _ v: [Double]) -> [Double] {
    (0..<3).map { (r: Int) -> Double in
        let x: Double = m[3 * r] * v[0], y: Double = m[3 * r + 1] * v[1], z: Double = m[3 * r + 2] * v[2]
        return x + y + z
    }
}

/// The inverse of a row-major 3×3 matrix (by cofactors; the matrices here are far from singular).
func invert(_ m: [Double]) -> [Double] {
    let c: [Double] = [
        m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
        m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
        m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
    ]
    let det = m[0] * c[0] + m[1] * c[3] + m[2] * c[6]
    return c.map { $0 / det }
}
