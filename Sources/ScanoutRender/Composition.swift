import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// How the picture fills the output.
public enum ScalingMode: String, Sendable, CaseIterable {
    /// The whole picture, aspect kept, letterboxed or pillarboxed (the default).
    case fit
    /// The whole output covered, aspect kept, the overflow cropped.
    case fill
    /// The whole output covered, aspect ignored.
    case stretch
    /// The picture at its natural size (one stored pixel per output pixel, widened or heightened
    /// by the sample aspect ratio), centred; cropped if the output is smaller.
    case none
}

/// A rectangle in output pixels, rows counted from the top. May extend past the output.
public struct PixelRect: Equatable, Sendable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// An 8-bit colour.
public struct RGBColor: Equatable, Sendable {
    public var r: UInt8, g: UInt8, b: UInt8
    public init(r: UInt8, g: UInt8, b: UInt8) { self.r = r; self.g = g; self.b = b }
    public static let black = RGBColor(r: 0, g: 0, b: 0)

    /// From "RRGGBB" (an optional leading "#").
    public init?(hex: String) {
        let s = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard s.count == 6, let v = UInt32(s, radix: 16) else { return nil }
        self.init(r: UInt8(v >> 16), g: UInt8(v >> 8 & 0xff), b: UInt8(v & 0xff))
    }
}

/// Straight-alpha RGBA pixels, rows top to bottom with no padding.
public struct RGBAImage: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var bytes: [UInt8]
    public init(width: Int, height: Int, bytes: [UInt8]) {
        precondition(bytes.count == width * height * 4, "RGBAImage: byte count does not match its size")
        self.width = width; self.height = height; self.bytes = bytes
    }
}

/// What one output picture looks like: its size, how the frame fills it (scaling, orientation,
/// sample aspect ratio), the background, and the layers over the picture (the logo, the
/// subtitles). A value handed to the renderers with each frame (`GLRenderer.render`,
/// `CPUCompositor.compose`, `ScanoutRenderer.draw`): no renderer keeps one, so what a frame
/// looks like is decided by its caller and nothing is set before a draw and undone after it.
/// The geometry is pure (`destination`), so that it can be tested with exact rectangles.
public struct Composition: Equatable, Sendable {
    /// Output size; nil: the picture's natural size (`naturalSize`).
    public var outputWidth: Int?
    public var outputHeight: Int?
    public var scaling: ScalingMode = .fit
    /// Rotation and mirror applied to the stored picture (usually the stream's).
    public var orientation: Orientation = .identity
    /// Whether the sample aspect ratio shapes the picture (square output pixels). When false the
    /// picture is laid out as if its pixels were square and the output image carries the frame's
    /// sample aspect ratio, as the CPU renderer does.
    public var applySampleAspectRatio = true
    public var background: RGBColor = .black
    public var overlay: Overlay?
    /// The subtitle layer over the picture and the overlay, in output pixels (`SubtitleRenderer`
    /// makes one per output size and time); nil: no text on this frame.
    public var subtitles: Overlay?
    /// How a PQ or HLG frame is brought to SDR as it is drawn (`CPUToneMapper`, or the GLES
    /// renderer's shader; by default
    /// `ToneMapping.default`, so that HDR drawn anywhere in SDR is tone mapped); nil: drawn as it
    /// is, its code values taken for SDR's (`render --tonemap none`, and a KMS screen showing
    /// HDR). SDR frames are drawn as they are either way.
    public var toneMapping: ToneMapping? = .default

    public init(outputWidth: Int? = nil, outputHeight: Int? = nil, scaling: ScalingMode = .fit, orientation: Orientation = .identity,
                applySampleAspectRatio: Bool = true, background: RGBColor = .black, overlay: Overlay? = nil) {
        self.outputWidth = outputWidth; self.outputHeight = outputHeight; self.scaling = scaling
        self.orientation = orientation; self.applySampleAspectRatio = applySampleAspectRatio
        self.background = background; self.overlay = overlay
    }

    /// Adds a text zone's layer (`TextZone`): in the logo's place when there is no logo, else in
    /// the subtitles' place, over the picture either way.
    public mutating func addText(_ layer: Overlay) {
        if overlay == nil { overlay = layer } else { subtitles = layer }
    }

    /// The upright size of a `width`×`height` stored picture with `sampleAspectRatio` (invalid:
    /// square) turned by `orientation`, in square pixels: the width grows for a ratio above 1,
    /// the height for one below.
    public static func naturalSize(width: Int, height: Int, sampleAspectRatio: Rational, orientation: Orientation) -> (width: Int, height: Int) {
        var w = width, h = height
        if sampleAspectRatio.isValid, sampleAspectRatio.num > 0, sampleAspectRatio.den > 0 {
            let n = Int(sampleAspectRatio.num), d = Int(sampleAspectRatio.den)
            if n > d { w = (2 * width * n + d) / (2 * d) } else if n < d { h = (2 * height * d + n) / (2 * n) }
        }
        return orientation.swapsDimensions ? (h, w) : (w, h)
    }

    /// Where the picture goes in a `outputWidth`×`outputHeight` output, in output pixels.
    /// Sizes are rounded to the nearest pixel; centring offsets round down (toward the top left).
    public static func destination(sourceWidth: Int, sourceHeight: Int, sampleAspectRatio: Rational, orientation: Orientation,
                                   outputWidth W: Int, outputHeight H: Int, mode: ScalingMode) -> PixelRect {
        let (nw, nh) = naturalSize(width: sourceWidth, height: sourceHeight, sampleAspectRatio: sampleAspectRatio, orientation: orientation)
        func centred(_ free: Int) -> Int { free >= 0 ? free / 2 : -((-free + 1) / 2) }
        func scaled(_ a: Int, by num: Int, _ den: Int) -> Int { (2 * a * num + den) / (2 * den) }
        switch mode {
        case .stretch:
            return PixelRect(x: 0, y: 0, width: W, height: H)
        case .none:
            return PixelRect(x: centred(W - nw), y: centred(H - nh), width: nw, height: nh)
        case .fit, .fill:
            // Picture wider than the output (relative to height)?
            let wider = nw * H > W * nh
            if wider == (mode == .fit) {
                let h = scaled(W, by: nh, nw)
                return PixelRect(x: 0, y: centred(H - h), width: W, height: h)
            } else {
                let w = scaled(H, by: nw, nh)
                return PixelRect(x: centred(W - w), y: 0, width: w, height: H)
            }
        }
    }

    /// The affine map from an output pixel position (x right, y down, pixel centres at +0.5) to
    /// a position in the stored picture, in stored pixels, for a picture drawn into `rect`:
    /// `(sx, sy) = (a·x + b·y + c, d·x + e·y + f)`, returned as `[a, b, c, d, e, f]`. The inverse
    /// of `PlaneTransform`: rotate clockwise, then mirror.
    public static func sourceMap(rect: PixelRect, sourceWidth: Int, sourceHeight: Int, orientation: Orientation) -> [Double] {
        // u, v in [0, 1] across the rectangle, as affine forms [coef x, coef y, constant].
        let u: [Double] = [1 / Double(rect.width), 0, -Double(rect.x) / Double(rect.width)]
        let v: [Double] = [0, 1 / Double(rect.height), -Double(rect.y) / Double(rect.height)]
        func oneMinus(_ f: [Double]) -> [Double] { [-f[0], -f[1], 1 - f[2]] }
        let mu = orientation.mirrored ? oneMinus(u) : u
        let sx: [Double], sy: [Double]
        switch orientation.rotation {
        case 90: sx = v; sy = oneMinus(mu)
        case 180: sx = oneMinus(mu); sy = oneMinus(v)
        case 270: sx = oneMinus(v); sy = mu
        default: sx = mu; sy = v
        }
        let w = Double(sourceWidth), h = Double(sourceHeight)
        return sx.map { $0 * w } + sy.map { $0 * h }
    }
}
