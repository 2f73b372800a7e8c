import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Composites a decoded frame into an XRGB8888 canvas (a KMS scanout buffer, or memory) with the
/// CPU, as the `Composition` each call is given says: its placement (fit, fill, stretch, none; rotation; sample aspect ratio),
/// background and overlay, with libswscale doing the colour conversion and the scaling in one
/// pass (`SWS_BICUBIC | SWS_BITEXACT`, YUV straight to XRGB).
///
/// At 1:1 the picture is byte for byte the CPU renderer's (swscale's unscaled conversion is the
/// same for packed 24- and 32-bit RGB); scaled, it is swscale's scaled conversion, which is what
/// the headless output and `scanout render --size` draw too, so a KMS screen and a headless run
/// agree exactly. Reuses its conversion context and buffers; one owner at a time.
public final class CPUCompositor {
    private let scaler = Scaler()
    private let scaled = VideoFrame()
    private let widened = VideoFrame()
    /// A compositor of its own for each zone of a canvas (its conversion context and buffers
    /// kept from frame to frame, and zones side by side drawn at once).
    var zoneCompositors: [CPUCompositor] = []
    /// Brings HDR frames to SDR first when the composition asks for it.
    private lazy var toneMapper = CPUToneMapper()

    public init() {}

    /// Draws `frame` as `c` says into the `width`×`height` XRGB8888 canvas at `pixels` (`stride`
    /// bytes per row). The composition's output size is ignored: the canvas is the output.
    /// With `format` `.xrgb2101010`, the canvas is 10 bits a channel and carries the picture's own
    /// HDR signal (`CanvasFormat`).
    package func compose(_ frame: VideoFrame, as c: Composition, into pixels: UnsafeMutableRawPointer, stride: Int,
                         width W: Int, height H: Int, format: CanvasFormat = .xrgb8888) throws {
        guard W > 0, H > 0, stride >= 4 * W else { throw RenderError.invalidSize("canvas \(W)x\(H), stride \(stride)") }
        try frame.makeCPUResident()
        let frame = try c.toneMapping.map { try toneMapper.map(frame, $0) } ?? frame
        let orientation = c.orientation
        var source = frame
        if !orientation.isIdentity {
            if !frame.canOrientPlanes(orientation) {
                // Chroma subsampled differently in the two directions (4:2:2): widen to 4:4:4 first.
                try scaler.convert(frame, to: .yuv444p, into: widened)
                source = widened
            }
            source = try source.oriented(orientation)
        }
        let sar = frame.sampleAspectRatio.isValid && c.applySampleAspectRatio ? frame.sampleAspectRatio : Rational(1, 1)
        let rect = Composition.destination(sourceWidth: frame.width, sourceHeight: frame.height, sampleAspectRatio: sar,
                                          orientation: orientation, outputWidth: W, outputHeight: H, mode: c.scaling)
        let bg = format.pixel(c.background)
        // The visible part of the picture.
        let x0 = max(rect.x, 0), y0 = max(rect.y, 0)
        let x1 = min(rect.x + rect.width, W), y1 = min(rect.y + rect.height, H)
        let scaledInside = (rect.width != source.width || rect.height != source.height)
            && rect.x >= 0 && rect.y >= 0 && rect.width > 0 && rect.height > 0 && rect.x + rect.width <= W && rect.y + rect.height <= H
        if scaledInside {
            // The whole picture inside the canvas and scaled: converted straight into it, the bars
            // around. swscale's scaled path writes each row's pixels and no more; its unscaled
            // converters (x86 SIMD) write rows in blocks of 8 pixels, past a zone's right edge, so
            // a picture at its own size goes through `scaled` as before.
            let at = pixels + rect.y * stride + 4 * rect.x
            try scaler.convert(source, to: format.pixelFormat, width: rect.width, height: rect.height,
                               packedInto: UnsafeMutableRawBufferPointer(start: at, count: stride * (rect.height - 1) + 4 * rect.width),
                               rowBytes: stride)
            for y in 0..<H {
                let row = pixels + y * stride
                if y < y0 || y >= y1 {
                    fill(row, count: W, with: bg)
                } else {
                    fill(row, count: x0, with: bg)
                    fill(row + 4 * x1, count: W - x1, with: bg)
                }
            }
        } else if x1 > x0 && y1 > y0 {
            try scaler.convert(source, to: format.pixelFormat, width: rect.width, height: rect.height, into: scaled)
            guard let base = scaled.planeData(0) else { throw RenderError.invalidSize("no converted picture") }
            let srcStride = scaled.lineSize(0)
            for y in 0..<H {
                let row = pixels + y * stride
                if y < y0 || y >= y1 {
                    fill(row, count: W, with: bg)
                    continue
                }
                fill(row, count: x0, with: bg)
                (row + 4 * x0).copyMemory(from: base + (y - rect.y) * srcStride + 4 * (x0 - rect.x), byteCount: 4 * (x1 - x0))
                fill(row + 4 * x1, count: W - x1, with: bg)
            }
        } else {
            for y in 0..<H { fill(pixels + y * stride, count: W, with: bg) }
        }
        for layer in [c.overlay, c.subtitles].compactMap({ $0 }) { layer.blend(into: pixels, stride: stride, width: W, height: H, format: format) }
    }

    /// Composites into a new packed rgb24 image of `width`×`height` (what `scanout render --size`
    /// writes, and the reference a KMS capture is compared with).
    public func compose(_ frame: VideoFrame, as composition: Composition, width: Int, height: Int) throws -> RGBImage {
        var canvas = [UInt8](repeating: 0, count: 4 * width * height)
        try canvas.withUnsafeMutableBytes { try compose(frame, as: composition, into: $0.baseAddress!, stride: 4 * width, width: width, height: height) }
        return RGBImage(xrgb: canvas, width: width, height: height, stride: 4 * width)
    }

    /// `width`×`height` pixels of `format` at `base` (`stride` bytes a row) set to `color`: a
    /// background, a censored buffer.
    package static func fill(_ base: UnsafeMutableRawPointer, stride: Int, width: Int, height: Int, with color: RGBColor,
                             format: CanvasFormat = .xrgb8888) {
        let value = format.pixel(color).littleEndian
        for y in 0..<height { (base + y * stride).assumingMemoryBound(to: UInt32.self).update(repeating: value, count: width) }
    }

    private func fill(_ row: UnsafeMutableRawPointer, count: Int, with value: UInt32) {
        guard count > 0 else { return }
        let p = row.assumingMemoryBound(to: UInt32.self)
        p.update(repeating: value.littleEndian, count: count)
    }
}

extension RGBImage {
    /// Packed rgb24 from an XRGB8888 canvas (B, G, R, X bytes).
    public init(xrgb bytes: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) {
        var out = [UInt8](repeating: 0, count: 3 * width * height)
        out.withUnsafeMutableBufferPointer { dst in
            for y in 0..<height {
                let row = y * stride
                for x in 0..<width {
                    let s = row + 4 * x, d = 3 * (y * width + x)
                    dst[d] = bytes[s + 2]; dst[d + 1] = bytes[s + 1]; dst[d + 2] = bytes[s]
                }
            }
        }
        self.init(width: width, height: height, layout: .rgb24, bytes: out)
    }

    public init(xrgb bytes: [UInt8], width: Int, height: Int, stride: Int) {
        self = bytes.withUnsafeBytes { RGBImage(xrgb: $0, width: width, height: height, stride: stride) }
    }
}
