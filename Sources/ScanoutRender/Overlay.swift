/// Where an overlay goes on the output: a top-left corner in output pixels, or a corner of the
/// output with a margin (resolved against the output's size when drawn, so that a logo stays in
/// its corner whatever the screen's mode).
public enum OverlayPosition: Equatable, Sendable, CustomStringConvertible {
    case point(x: Int, y: Int)
    case corner(Corner, margin: Int)

    public enum Corner: String, CaseIterable, Sendable {
        case topLeft = "top-left", topRight = "top-right", bottomLeft = "bottom-left", bottomRight = "bottom-right"
    }

    /// The syntax `--overlay-position` and the config key `position` take.
    public static let syntax = "X,Y (pixels from the top left), or top-left, top-right, bottom-left, bottom-right with an optional :MARGIN in pixels (bottom-right:24)"

    /// From "X,Y", "CORNER" or "CORNER:MARGIN" (margin 0 when left out); nil for anything else.
    public init?(_ text: String) {
        let t = text.filter { $0 != " " }
        let xy = t.split(separator: ",", omittingEmptySubsequences: false)
        if xy.count == 2 {
            guard let x = Int(xy[0]), let y = Int(xy[1]) else { return nil }
            self = .point(x: x, y: y)
            return
        }
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let corner = Corner(rawValue: String(parts[0])) else { return nil }
        var margin = 0
        if parts.count == 2 {
            guard let m = Int(parts[1]), m >= 0 else { return nil }
            margin = m
        }
        self = .corner(corner, margin: margin)
    }

    public var description: String {
        switch self {
        case let .point(x, y): "\(x),\(y)"
        case let .corner(c, margin): margin == 0 ? c.rawValue : "\(c.rawValue):\(margin)"
        }
    }

    /// The top-left corner of a `width`×`height` image placed so on a `outputWidth`×`outputHeight`
    /// output, in output pixels (may lie outside it; drawing clips).
    public func origin(width: Int, height: Int, outputWidth W: Int, outputHeight H: Int) -> (x: Int, y: Int) {
        switch self {
        case let .point(x, y): return (x, y)
        case let .corner(c, m):
            let left = c == .topLeft || c == .bottomLeft, top = c == .topLeft || c == .topRight
            return (left ? m : W - width - m, top ? m : H - height - m)
        }
    }
}

/// An image drawn over the video at its own size: a logo or watermark.
public struct Overlay: Equatable, Sendable {
    public var image: RGBAImage
    public var position: OverlayPosition
    /// 0 (invisible) ... 1 (the image's own alpha).
    public var opacity: Double
    /// The file the image was read from (for reports and `GET /config`); nil when made in memory.
    public var path: String?

    public init(image: RGBAImage, position: OverlayPosition, opacity: Double = 1, path: String? = nil) {
        self.image = image; self.position = position; self.opacity = opacity; self.path = path
    }

    /// At a top-left corner `x`, `y` in output pixels.
    public init(image: RGBAImage, x: Int = 0, y: Int = 0, opacity: Double = 1) {
        self.init(image: image, position: .point(x: x, y: y), opacity: opacity)
    }

    /// Reads the image at `path` (PNG with alpha, or any still `ImageReader` reads).
    public static func load(path: String, position: OverlayPosition = .point(x: 0, y: 0), opacity: Double = 1) throws -> Overlay {
        Overlay(image: try ImageReader.readRGBA(path: path), position: position, opacity: opacity, path: path)
    }

    /// Where the image's top-left corner goes on a `width`×`height` output.
    public func origin(outputWidth: Int, outputHeight: Int) -> (x: Int, y: Int) {
        position.origin(width: image.width, height: image.height, outputWidth: outputWidth, outputHeight: outputHeight)
    }

    /// The byte order of the 8-bit pixels `blend` writes into.
    public enum PixelOrder: Sendable {
        /// XRGB8888 in memory: B, G, R, X (a KMS scanout buffer, the CPU compositor's canvas).
        case xrgb8888
        /// Packed rgb24: R, G, B (the CPU renderer's image).
        case rgb24

        var bytesPerPixel: Int { self == .xrgb8888 ? 4 : 3 }
        /// Offsets of R, G and B in a pixel.
        var offsets: (r: Int, g: Int, b: Int) { self == .xrgb8888 ? (2, 1, 0) : (0, 1, 2) }
    }

    /// Blends the image over `width`×`height` pixels at `pixels` (`stride` bytes per row), source
    /// over, its straight alpha scaled by `opacity` (in 1/255 steps), rounded to nearest; clipped
    /// to the output. What the GLES renderer's blending computes in floating point.
    public func blend(into pixels: UnsafeMutableRawPointer, stride: Int, width W: Int, height H: Int, order: PixelOrder) {
        let a0 = Int((min(max(opacity, 0), 1) * 255).rounded())
        guard a0 > 0 else { return }
        let (ox, oy) = origin(outputWidth: W, outputHeight: H)
        let bpp = order.bytesPerPixel, (ro, go, bo) = order.offsets
        let full = 255 * 255
        image.bytes.withUnsafeBufferPointer { src in
            for y in max(0, oy)..<max(max(0, oy), min(H, oy + image.height)) {
                let row = (pixels + y * stride).assumingMemoryBound(to: UInt8.self)
                for x in max(0, ox)..<max(max(0, ox), min(W, ox + image.width)) {
                    let s = 4 * ((y - oy) * image.width + (x - ox))
                    let a = Int(src[s + 3]) * a0
                    guard a > 0 else { continue }
                    let d = bpp * x
                    func mix(_ value: UInt8, _ off: Int) {
                        row[d + off] = UInt8((Int(value) * a + Int(row[d + off]) * (full - a) + full / 2) / full)
                    }
                    mix(src[s], ro); mix(src[s + 1], go); mix(src[s + 2], bo)
                }
            }
        }
    }

    /// Blends the image over an rgb24 image (`blend(into:...)` with `.rgb24`).
    public func blend(into image: inout RGBImage) {
        precondition(image.layout == .rgb24, "Overlay.blend: rgb24 images only")
        let (w, h) = (image.width, image.height)
        image.bytes.withUnsafeMutableBytes { blend(into: $0.baseAddress!, stride: 3 * w, width: w, height: h, order: .rgb24) }
    }
}
