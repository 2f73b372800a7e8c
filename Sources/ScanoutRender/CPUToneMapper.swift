import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Tone maps PQ and HLG frames to SDR on the CPU: the same picture as FFmpeg's
/// `zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=CURVE:desat=0,zscale=t=bt709`.
///
/// libswscale (`Scaler`) turns the YCbCr frame into 16-bit RGB; then each pixel goes through a
/// table for the transfer (code value to linear light), the BT.2020-to-BT.709 matrix, the curve
/// (`ToneCurve`) on its brightest component, and a table for the BT.709 transfer to 8 bits. The
/// result is an 8-bit RGB frame (`Output`) tagged BT.709 (primaries, transfer), full range, with
/// the input's size, timestamps and sample aspect ratio, which the renderers draw like any RGB
/// frame. SDR frames are handed back as they are.
///
/// Reuses its conversion context, tables and pictures between frames; one owner at a time.
public final class CPUToneMapper {
    /// The layout of the frames `map` returns.
    public enum Output: Sendable {
        /// B, G, R, unused: the CPU compositor's XRGB8888.
        case bgr0
        /// R, G, B, A (opaque): what the GL renderer uploads.
        case rgba

        var pixelFormat: PixelFormat { self == .bgr0 ? .bgr0 : .rgba }
    }

    private let output: Output
    private let scaler = Scaler()
    /// The frame in 16-bit RGB (rgb48le), still PQ or HLG coded, BT.2020.
    private let deep = VideoFrame()
    /// The mapped picture; handed out as a `clone()`, so it is rewritten only once its taker has
    /// let go of it.
    private let mapped = VideoFrame()
    private var tables: ToneTables?

    public init(output: Output = .bgr0) {
        self.output = output
    }

    /// Whether `frame` is HDR (tagged PQ or HLG), which `map` tone maps.
    public static func isHDR(_ frame: VideoFrame) -> Bool {
        frame.colorTransfer.dynamicRange != .sdr
    }

    /// `frame` tone mapped as `mapping` says; `frame` itself when it is SDR. A GPU-only hardware
    /// frame is downloaded first (`VideoFrame.makeCPUResident()`).
    public func map(_ frame: VideoFrame, _ mapping: ToneMapping) throws -> VideoFrame {
        guard Self.isHDR(frame) else { return frame }
        try frame.makeCPUResident()
        let planes = Self.yuv420Planes(frame)
        if planes == nil { try scaler.convert(frame, to: PixelFormat(AV_PIX_FMT_RGB48LE), into: deep) }
        let peakNits = mapping.peak ?? ToneMapping.signalPeak(transfer: frame.colorTransfer, contentLightLevel: frame.contentLightLevel,
                                                              masteringDisplay: frame.masteringDisplay)
        guard peakNits > 0, peakNits.isFinite else { throw ToneMappingError.invalidPeak(peakNits) }
        let key = ToneTables.Key(transfer: frame.colorTransfer, primaries: frame.colorPrimaries, curve: mapping.curve,
                                 peak: peakNits / HDRTransfer.referenceWhite, desaturation: mapping.desaturation ?? 0)
        if tables?.key != key { tables = ToneTables(key) }
        try prepareOutput(like: frame)
        if let planes, let dst = mapped.planeData(0) {
            tables!.run(yuv: planes, dst: UnsafeMutableRawPointer(dst), dstStride: mapped.lineSize(0), width: frame.width, height: frame.height,
                        rgba: output == .rgba)
            return mapped.clone()
        }
        guard let src = deep.planeData(0), let dst = mapped.planeData(0) else {
            throw ToneMappingError.noPicture("\(frame.pixelFormat) \(frame.width)x\(frame.height)")
        }
        tables!.run(src: UnsafeRawPointer(src), srcStride: deep.lineSize(0), dst: UnsafeMutableRawPointer(dst), dstStride: mapped.lineSize(0),
                    width: frame.width, height: frame.height, rgba: output == .rgba)
        return mapped.clone()
    }

    /// The planes of a 10-bit 4:2:0 frame (yuv420p10le or P010) in BT.2020 or BT.709 YCbCr, which
    /// `ToneTables.run(yuv:…)` maps with no RGB picture in between (swscale's conversion to
    /// rgb48le took 58 ms of a 3840×2160 frame's ~150 on one core); nil for any other frame.
    private static func yuv420Planes(_ frame: VideoFrame) -> YUV420Planes? {
        let weights: (Float, Float)
        switch frame.colorSpace {
        case .bt2020ncl: weights = (0.2627, 0.0593)
        case .bt709: weights = (0.2126, 0.0722)
        default: return nil
        }
        guard let y = frame.planeData(0), let c = frame.planeData(1) else { return nil }
        let full = frame.colorRange == .full
        switch frame.pixelFormat {
        case .yuv420p10:
            guard let cr = frame.planeData(2) else { return nil }
            return YUV420Planes(luma: UnsafeRawPointer(y), lumaStride: frame.lineSize(0), cb: UnsafeRawPointer(c), cr: UnsafeRawPointer(cr),
                                chromaStride: frame.lineSize(1), chromaStep: 1, shift: 0, kr: weights.0, kb: weights.1, fullRange: full)
        case .p010:
            return YUV420Planes(luma: UnsafeRawPointer(y), lumaStride: frame.lineSize(0), cb: UnsafeRawPointer(c), cr: UnsafeRawPointer(c) + 2,
                                chromaStride: frame.lineSize(1), chromaStep: 2, shift: 6, kr: weights.0, kb: weights.1, fullRange: full)
        default:
            return nil
        }
    }

    /// Gives `mapped` writable buffers of `frame`'s size and `frame`'s properties, tagged SDR.
    private func prepareOutput(like frame: VideoFrame) throws {
        let out = mapped.pointer
        let format = output.pixelFormat.rawValue
        let reusable = out.pointee.buf.0 != nil && out.pointee.format == format && out.pointee.width == Int32(frame.width)
            && out.pointee.height == Int32(frame.height) && av_frame_is_writable(out) != 0
        if !reusable {
            av_frame_unref(out)
            out.pointee.format = format
            out.pointee.width = Int32(frame.width)
            out.pointee.height = Int32(frame.height)
            let r = av_frame_get_buffer(out, 0)
            guard r >= 0 else { throw ToneMappingError.noPicture("av_frame_get_buffer failed (\(r))") }
        }
        av_frame_copy_props(out, frame.pointer)
        av_frame_remove_side_data(out, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)
        av_frame_remove_side_data(out, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL)
        out.pointee.color_trc = AVCOL_TRC_BT709
        out.pointee.color_primaries = AVCOL_PRI_BT709
        out.pointee.colorspace = AVCOL_SPC_RGB
        out.pointee.color_range = AVCOL_RANGE_JPEG
    }
}

/// Why a frame could not be tone mapped.
public enum ToneMappingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The signal peak (cd/m²) is not a positive number.
    case invalidPeak(Double)
    /// No picture to map from or into.
    case noPicture(String)

    public var description: String {
        switch self {
        case .invalidPeak(let p): return "tone mapping: the signal peak must be a positive number of cd/m², not \(p)"
        case .noPicture(let why): return "tone mapping: no picture (\(why))"
        }
    }
}
