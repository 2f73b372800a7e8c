import Foundation
import ScanoutTestSupport
import Testing

/// `scanout play` of an HLS VOD master playlist states its length (5 s, ffprobe's) in its status line.
@Suite struct HLSDurationCLITests {
    @Test("play's status line carries the playlist's duration: position / 00:05.0")
    func statusLineDuration() async throws {
        try await offPool {
            let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            let r = try CLI.run(["play", hls.url("master.m3u8"), "--output", "headless"])
            #expect(r.status == 0, "\(r.stderrText)")
            let lines = r.stderrText.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).filter { $0.contains("  frame ") && $0.contains("  dropped ") }
            #expect(!lines.isEmpty, "\(r.stderrText)")
            #expect(lines.allSatisfy { $0.contains(" / 00:05.0 ") }, "\(lines)")
        }
    }
}
