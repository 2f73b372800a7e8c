import CFFmpeg
import ScanoutCore

/// The facts of an H.264 sequence parameter set that `avformat_find_stream_info` would otherwise
/// decode a picture to learn: profile and level, chroma format and bit depth (hence the pixel
/// format the decoder will choose), and the VUI's aspect ratio, range and colour description.
/// Read from an MP4's `avcC` record, whose first SPS describes the whole stream.
struct H264SequenceHeader {
    var profileIDC = 0
    var constraintFlags = 0
    var levelIDC = 0
    var chromaFormatIDC = 1
    var bitDepth = 8
    var frameMBsOnly = true
    var sampleAspectRatio: (num: Int32, den: Int32)?
    var fullRange: Bool?
    var colour: (primaries: Int32, transfer: Int32, matrix: Int32)?

    /// Parses the first SPS of an `avcC` record; nil when it is not one or the SPS is cut short.
    init?(avcC: UnsafeBufferPointer<UInt8>) {
        guard avcC.count >= 8, avcC[0] == 1, avcC[5] & 0x1f >= 1 else { return nil }
        let length = Int(avcC[6]) << 8 | Int(avcC[7])
        guard length >= 4, avcC.count >= 8 + length, avcC[8] & 0x1f == 7 else { return nil }
        var bits = RBSPReader(Array(avcC[9..<(8 + length)]))
        guard parse(&bits), !bits.overrun else { return nil }
    }

    private mutating func parse(_ r: inout RBSPReader) -> Bool {
        profileIDC = r.bits(8)
        constraintFlags = r.bits(8)
        levelIDC = r.bits(8)
        _ = r.ue()  // seq_parameter_set_id
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profileIDC) {
            chromaFormatIDC = r.ue()
            if chromaFormatIDC == 3 { _ = r.bits(1) }
            bitDepth = r.ue() + 8
            _ = r.ue()       // bit_depth_chroma_minus8
            _ = r.bits(1)    // qpprime_y_zero_transform_bypass_flag
            if r.bits(1) == 1 {  // seq_scaling_matrix_present_flag
                for i in 0..<(chromaFormatIDC == 3 ? 12 : 8) where r.bits(1) == 1 {
                    r.skipScalingList(size: i < 6 ? 16 : 64)
                }
            }
        }
        _ = r.ue()  // log2_max_frame_num_minus4
        switch r.ue() {  // pic_order_cnt_type
        case 0: _ = r.ue()
        case 1:
            _ = r.bits(1); _ = r.se(); _ = r.se()
            let cycle = r.ue()
            guard cycle <= 255 else { return false }
            for _ in 0..<cycle { _ = r.se() }
        default: break
        }
        _ = r.ue(); _ = r.bits(1)  // max_num_ref_frames, gaps_in_frame_num_value_allowed_flag
        _ = r.ue(); _ = r.ue()     // picture size in macroblocks (the container has the size)
        frameMBsOnly = r.bits(1) == 1
        if !frameMBsOnly { _ = r.bits(1) }
        _ = r.bits(1)  // direct_8x8_inference_flag
        if r.bits(1) == 1 { for _ in 0..<4 { _ = r.ue() } }  // cropping
        guard r.bits(1) == 1 else { return true }  // vui_parameters_present_flag
        if r.bits(1) == 1 {  // aspect_ratio_info_present_flag
            let idc = r.bits(8)
            if idc == 255 {
                sampleAspectRatio = (Int32(r.bits(16)), Int32(r.bits(16)))
            } else if idc < Self.aspectRatios.count {
                sampleAspectRatio = Self.aspectRatios[idc]
            }
        }
        if r.bits(1) == 1 { _ = r.bits(1) }  // overscan
        if r.bits(1) == 1 {  // video_signal_type_present_flag
            _ = r.bits(3)
            fullRange = r.bits(1) == 1
            if r.bits(1) == 1 { colour = (Int32(r.bits(8)), Int32(r.bits(8)), Int32(r.bits(8))) }
        }
        return true
    }

    /// Table E-1 (aspect_ratio_idc 0 is "unspecified").
    private static let aspectRatios: [(num: Int32, den: Int32)] = [
        (0, 1), (1, 1), (12, 11), (10, 11), (16, 11), (40, 33), (24, 11), (20, 11), (32, 11),
        (80, 33), (18, 11), (15, 11), (64, 33), (160, 99), (4, 3), (3, 2), (2, 1),
    ]

    /// The profile as libavcodec numbers it (`ff_h264_get_profile`).
    var profile: Int32 {
        var p = Int32(profileIDC)
        switch profileIDC {
        case 66: if constraintFlags & 0x40 != 0 { p |= 1 << 9 }          // constrained baseline
        case 110, 122, 244: if constraintFlags & 0x10 != 0 { p |= 1 << 11 }  // intra
        default: break
        }
        return p
    }

    /// The pixel format libavcodec's H.264 decoder chooses for this stream, for the layouts whose
    /// choice is certain (4:2:0 at 8 or 10 bits); nil otherwise. `containerRange` is the range
    /// the container states, which the decoder uses when the VUI states none.
    func pixelFormat(containerRange: AVColorRange) -> AVPixelFormat? {
        guard chromaFormatIDC == 1 else { return nil }
        let full = fullRange ?? (containerRange == AVCOL_RANGE_JPEG)
        switch bitDepth {
        case 8: return full ? AV_PIX_FMT_YUVJ420P : AV_PIX_FMT_YUV420P
        case 10: return AV_PIX_FMT_YUV420P10LE
        default: return nil
        }
    }
}

/// Bits of an RBSP (the NAL payload with its emulation-prevention bytes taken out), read past
/// the end as zeros with `overrun` set.
struct RBSPReader {
    private var bytes: [UInt8] = []
    private var position = 0
    private(set) var overrun = false

    init(_ nal: [UInt8]) {
        bytes.reserveCapacity(nal.count)
        var zeros = 0
        for b in nal {
            if zeros >= 2 && b == 3 { zeros = 0; continue }
            zeros = b == 0 ? zeros + 1 : 0
            bytes.append(b)
        }
    }

    mutating func bits(_ n: Int) -> Int {
        var v = 0
        for _ in 0..<n {
            let byte = position >> 3
            if byte >= bytes.count { overrun = true; v <<= 1; position += 1; continue }
            v = v << 1 | Int(bytes[byte] >> (7 - UInt8(position & 7)) & 1)
            position += 1
        }
        return v
    }

    /// Exp-Golomb, unsigned.
    mutating func ue() -> Int {
        var zeros = 0
        while bits(1) == 0 {
            zeros += 1
            if zeros > 31 || overrun { overrun = true; return 0 }
        }
        return (1 << zeros) - 1 + bits(zeros)
    }

    /// Exp-Golomb, signed.
    mutating func se() -> Int {
        let k = ue()
        return k & 1 == 1 ? (k + 1) / 2 : -(k / 2)
    }

    mutating func skipScalingList(size: Int) {
        var last = 8, next = 8
        for _ in 0..<size {
            if next != 0 { next = (last + se() + 256) % 256 }
            if next != 0 { last = next }
        }
    }
}
