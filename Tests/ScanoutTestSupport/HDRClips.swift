import Foundation

/// Small HDR and SDR clips made with ffmpeg at test time (never committed), and EDIDs with and
/// without HDR blocks.
public enum HDRClips {
    /// The SEI libx265 writes with `master`: BT.2020-ish primaries in x265's G, B, R order,
    /// D65, 1000 to 0.0001 cd/m²; and MaxCLL 1000, MaxFALL 400.
    public static let x265Mastering = "master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400"

    /// `frames` frames of a solid `colour` (an ffmpeg colour) or of testsrc2 (colour nil), 10-bit
    /// HEVC tagged BT.2020 with `transfer` (smpte2084 or arib-std-b67), lossless, with the
    /// mastering SEI when asked.
    public static func hdr(_ path: String, transfer: String = "smpte2084", mastering: Bool = true, colour: String? = "white",
                           size: String = "64x36", frames: Int = 3) throws {
        var params = "colorprim=bt2020:transfer=\(transfer):colormatrix=bt2020nc:lossless=1:log-level=error"
        if mastering { params += ":" + x265Mastering }
        let source = colour.map { "color=c=\($0):size=\(size):rate=25" } ?? "testsrc2=size=\(size):rate=25"
        _ = try Proc.ffmpeg(["-f", "lavfi", "-i", source, "-frames:v", "\(frames)", "-pix_fmt", "yuv420p10le",
                             "-c:v", "libx265", "-x265-params", params, "-color_primaries", "bt2020", "-color_trc", transfer,
                             "-colorspace", "bt2020nc", "-y", path])
    }

    /// `frames` frames of a solid `colour`, 8-bit H.264 with no colour tags (SDR).
    public static func sdr(_ path: String, colour: String = "white", size: String = "64x36", frames: Int = 3) throws {
        _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "color=c=\(colour):size=\(size):rate=25", "-frames:v", "\(frames)",
                             "-pix_fmt", "yuv420p", "-c:v", "libx264", "-qp", "0", "-y", path])
    }

    /// A 256-byte EDID: a base block (header only, one extension) and a CTA-861 extension holding
    /// `blocks` (each a data block with its header byte), then padding.
    public static func edid(_ blocks: [[UInt8]]) -> [UInt8] {
        var base = [UInt8](repeating: 0, count: 128)
        base[0..<8] = [0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00]
        base[126] = 1
        var cta: [UInt8] = [0x02, 0x03, 0, 0]
        for b in blocks { cta += b }
        cta[2] = UInt8(cta.count)
        cta += [UInt8](repeating: 0, count: 128 - cta.count)
        return base + cta
    }

    /// An EDID whose HDR Static Metadata block declares `eotfs` (bit 0 SDR, 1 HDR gamma, 2 PQ,
    /// 3 HLG), max CV 115 (603.67 cd/m²), and BT.2020 RGB colorimetry; nil `eotfs`: no HDR block.
    public static func edid(eotfs: UInt8?) -> [UInt8] {
        var blocks: [[UInt8]] = [[0x40 | 3, 0x01, 0x02, 0x03]]
        if let eotfs { blocks += [[0xe0 | 6, 6, eotfs, 0x01, 115, 90, 16], [0xe0 | 3, 5, 0xc0, 0x80]] }
        return edid(blocks)
    }
}
