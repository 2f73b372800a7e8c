import Foundation
import Hummingbird
import HummingbirdTesting
@testable import ScanoutService
import ScanoutTestSupport
import Testing

/// `/state`'s `colour`: the current item's matrix, range, primaries, transfer and HDR kind.
@Suite("the colour of what plays, in /state", .serialized)
struct ColourStateTests {
    @Test("an HEVC 10-bit PQ clip says BT.2020 and PQ; an SDR clip says SDR; nothing loaded: null")
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
        }
    }
}
