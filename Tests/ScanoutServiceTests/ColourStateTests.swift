import Foundation
import Hummingbird
import HummingbirdTesting
@testable import ScanoutService
import ScanoutTestSupport
import ScanoutKMS
import ScanoutTesting
import Testing

/// `/state`'s `colour`: the current item's matrix, range, primaries, transfer and HDR kind.
@Suite("the colour of what plays, in /state", .serialized)
struct ColourStateTests {
    @Test("an HEVC 10-bit PQ clip says BT.2020 and PQ; an SDR clip says SDR; in MPEG-TS, the SEI's static metadata; nothing loaded: null")
    func colour() async throws {
        let scratch = try Scratch()
        let pq = scratch.path("pq.mkv")
        _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x72:rate=25", "-frames:v", "25", "-pix_fmt", "yuv420p10le",
                             "-c:v", "libx265", "-x265-params", "colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:log-level=error",
                             "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-y", pq])
        let service = try await InProcessService(keys: nil)
        defer { service.player.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            #expect(try await service.request(client, .get, "/state").json["colour"] is NSNull)
            #expect(try await service.request(client, .post, "/load", ["source": pq, "autoplay": true]).status == 200)
            try await service.wait { service.player.snapshot.framesPresented >= 1 }
            let colour = try #require(try await service.request(client, .get, "/state").json["colour"] as? [String: Any])
            #expect(colour["dynamicRange"] as? String == "pq" && colour["transfer"] as? String == "smpte2084", "\(colour)")
            #expect(colour["primaries"] as? String == "bt2020" && colour["matrix"] as? String == "bt2020nc" && colour["range"] as? String == "limited")
            #expect(try await service.request(client, .post, "/load", ["source": try Fixtures.path("counter.mp4"), "autoplay": true]).status == 200)
            try await service.wait { service.player.snapshot.playlist.first?.source.hasSuffix("counter.mp4") == true && service.player.snapshot.framesPresented >= 1 }
            let sdr = try #require(try await service.request(client, .get, "/state").json["colour"] as? [String: Any])
            #expect(sdr["dynamicRange"] as? String == "sdr" && sdr["masteringDisplay"] is NSNull, "\(sdr)")

            // HEVC in MPEG-TS: the static metadata only in SEI, read from the first frame.
            let ts = scratch.path("pq.ts")
            _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x72:rate=25", "-frames:v", "25", "-pix_fmt", "yuv420p10le", "-c:v", "libx265",
                                 "-x265-params", "colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:log-level=error:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400",
                                 "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-y", ts])
            #expect(try await service.request(client, .post, "/load", ["source": ts, "autoplay": true]).status == 200)
            try await service.wait { service.player.snapshot.playlist.first?.source == ts && service.player.snapshot.framesPresented >= 1 }
            let sei = try #require(try await service.request(client, .get, "/state").json["colour"] as? [String: Any])
            let mastering = sei["masteringDisplay"] as? [String: Any]
            #expect(mastering?["maxLuminance"] as? Double == 1000 && mastering?["red"] as? [Double] == [0.68, 0.32], "\(sei)")
            #expect((sei["contentLightLevel"] as? [String: Any])?["maxFALL"] as? Int == 400)
        }
    }

    @Test("outputColours: on a screen that declares PQ the output says HDR10; on one that does not, tone mapped and why; SDR: sdr")
    func outputColours() async throws {
        let scratch = try Scratch()
        let pq = scratch.path("pq.mp4")
        try HDRClips.hdr(pq, colour: nil, size: "128x72", frames: 25)
        for (eotfs, expected) in [(UInt8(0b0101), "HDR10 (PQ)"), (nil, "tone mapped to SDR (HDMI-A-1's EDID has no HDR static metadata block)")] {
            let service = try await InProcessService(keys: nil) { FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: eotfs), width: 320, height: 240) }
            defer { service.player.shutdown() }
            try await Application(router: service.api.router()).test(.router) { client in
                #expect(try await service.request(client, .post, "/load", ["source": pq, "autoplay": true]).status == 200)
                try await service.wait { service.player.snapshot.framesPresented >= 2 }
                let colours = try #require(try await service.request(client, .get, "/state").json["outputColours"] as? [String: String])
                #expect(colours["HDMI-A-1"]?.hasPrefix(expected) == true, "\(colours)")
                #expect(try await service.request(client, .post, "/load", ["source": try Fixtures.path("counter.mp4"), "autoplay": true]).status == 200)
                try await service.wait {
                    service.player.snapshot.playlist.first?.source.hasSuffix("counter.mp4") == true && service.player.snapshot.outputColours["HDMI-A-1"] == "sdr"
                }
                #expect(try await service.request(client, .get, "/state").json["outputColours"] as? [String: String] == ["HDMI-A-1": "sdr"])
            }
        }
    }
}
