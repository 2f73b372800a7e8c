import Foundation

/// A lossless HDR test chart (HEVC, libx265 `lossless=1`, so decoding gives back exactly what
/// was encoded): nine bands of 20 rows, each a ramp in code values from black on the left to the
/// brightest on the right: grey, red, green, blue, cyan, magenta, yellow, a warm tint (1, 0.7,
/// 0.4) and a hue sweep. The ramps are drawn straight in PQ or HLG code values, so a PQ chart
/// spans 0 to 4000 cd/m² (code 0.9026). Tagged BT.2020 (primaries and matrix), limited range;
/// a PQ chart carries an ST 2086 mastering display (4000 cd/m²) and MaxCLL 4000, MaxFALL 400.
public enum HDRChart {
    public enum Transfer: String, Sendable {
        case pq = "smpte2084", hlg = "arib-std-b67"
    }

    /// Writes a `frames`-frame 320×180 chart to `path` (.mkv) with 4:2:0 (`yuv420p10le`) or
    /// 4:4:4 (`yuv444p10le`) chroma.
    /// `metadata: false` leaves out the PQ chart's mastering display and light levels.
    public static func make(_ path: String, transfer: Transfer, pixelFormat: String = "yuv420p10le", frames: Int = 2,
                            width: Int = 320, height: Int = 180, metadata: Bool = true) throws {
        let top = transfer == .pq ? 0.9026 : 1.0
        // Per band, the share of the ramp each channel gets; the last band sweeps the hue.
        let bands: [[Double]] = [[1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 1], [1, 0, 1], [1, 1, 0], [1, 0.7, 0.4]]
        func channel(_ c: Int, phase: Double) -> String {
            var e = "0.5+0.5*sin(6.2832*X/W+\(phase))"
            for (i, b) in bands.enumerated().reversed() { e = "if(lt(Y,\(20 * (i + 1))),\(b[c]),\(e))" }
            return "65535*\(top)*(X/(W-1))*(\(e))"
        }
        let geq = "geq=r='\(channel(0, phase: 0))':g='\(channel(1, phase: 2.094))':b='\(channel(2, phase: 4.189))'"
        var params = "lossless=1:pools=1:frame-threads=1:log-level=error:colorprim=bt2020:transfer=\(transfer.rawValue):colormatrix=bt2020nc"
        if transfer == .pq && metadata {
            params += ":master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(40000000,50):max-cll=4000,400"
        }
        _ = try Proc.ffmpeg([
            "-f", "lavfi", "-i",
            "color=black:size=\(width)x\(height):rate=10,format=gbrp16le,\(geq),scale=out_color_matrix=bt2020:out_range=tv,format=\(pixelFormat),trim=end_frame=\(frames)",
            "-c:v", "libx265", "-x265-params", params, "-color_primaries", "bt2020", "-color_trc", transfer.rawValue,
            "-colorspace", "bt2020nc", "-color_range", "tv", "-y", path,
        ])
    }

    /// FFmpeg's tone mapping of frame 0 of `path` with `curve` as packed rgb24: zimg (zscale) to
    /// linear light with 100 cd/m² white, to BT.709 primaries, the `tonemap` filter without
    /// desaturation, zimg to the BT.709 transfer, then planar to packed RGB (no subsampling).
    public static func reference(_ path: String, curve: String) throws -> [UInt8] {
        [UInt8](try Proc.ffmpeg(["-i", path, "-frames:v", "1", "-vf", referenceFilter(curve: curve),
                                 "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
    }

    /// The filter chain `reference` runs.
    public static func referenceFilter(curve: String) -> String {
        "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=\(curve):desat=0,zscale=t=bt709,format=gbrp"
    }
}
