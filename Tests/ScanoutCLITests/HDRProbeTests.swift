import Foundation
import ScanoutTestSupport
import Testing

/// `scanout probe` of HDR streams: the transfer and primaries, and HDR10's static metadata from
/// the container or, where it states none (HEVC in MPEG-TS), from the first frame's SEI.
@Suite("scanout probe, HDR")
struct HDRProbeTests {
    /// A 10-bit HEVC clip tagged BT.2020/PQ with ST 2086 and CTA-861.3 SEI (libx265), 3 frames.
    static func pqClip(_ path: String, mastering: Bool = true) throws {
        var params = "colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:log-level=error"
        if mastering { params += ":master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400" }
        _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x72:rate=25", "-frames:v", "3", "-pix_fmt", "yuv420p10le",
                             "-c:v", "libx265", "-x265-params", params, "-color_primaries", "bt2020", "-color_trc", "smpte2084",
                             "-colorspace", "bt2020nc", "-y", path])
    }

    @Test("PQ with its mastering display and light levels read from the first frame; the same in --json")
    func pq() throws {
        let scratch = try Scratch()
        let clip = scratch.path("pq.ts")
        try Self.pqClip(clip)
        let r = try CLI.run(["probe", clip])
        #expect(r.status == 0, "\(r.stderrText)")
        let line = r.stdoutText.split(separator: "\n").first { $0.hasPrefix("  transfer:") } ?? ""
        #expect(line == "  transfer:  smpte2084, primaries bt2020: HDR (PQ); mastered on R 0.6800,0.3200 G 0.2650,0.6900 B 0.1500,0.0600 W 0.3127,0.3290, 0.0001 to 1000 cd/m²; MaxCLL 1000, MaxFALL 400 cd/m²", "\(line)")
        let json = try CLI.run(["probe", "--json", clip])
        let input = try #require((try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])?["input"] as? [String: Any])
        #expect(input["dynamicRange"] as? String == "pq" && input["colorTransfer"] as? String == "smpte2084" && input["colorPrimaries"] as? String == "bt2020")
        let mastering = try #require(input["masteringDisplay"] as? [String: Any])
        #expect(mastering["maxLuminance"] as? Double == 1000 && mastering["minLuminance"] as? Double == 0.0001)
        #expect(mastering["red"] as? [Double] == [0.68, 0.32])
        #expect((input["contentLightLevel"] as? [String: Any])?["maxCLL"] as? Int == 1000)
    }

    @Test("PQ without static metadata says so; an SDR clip is SDR, with no metadata in --json")
    func withoutMetadata() throws {
        let scratch = try Scratch()
        let clip = scratch.path("bare.mkv")
        try Self.pqClip(clip, mastering: false)
        let r = try CLI.run(["probe", clip])
        #expect(r.stdoutText.contains("  transfer:  smpte2084, primaries bt2020: HDR (PQ); no mastering display stated; no light levels stated"), "\(r.stdoutText)")
        let sdr = try CLI.run(["probe", "--json", try Fixtures.path("counter.mp4")])
        let input = try #require((try JSONSerialization.jsonObject(with: sdr.stdout) as? [String: Any])?["input"] as? [String: Any])
        #expect(input["dynamicRange"] as? String == "sdr" && input["masteringDisplay"] == nil && input["contentLightLevel"] == nil)
    }
}
