import Foundation
import Testing
import ScanoutTestSupport

/// Exit status 2 only when what the job read was damaged; 1 with the cause in words when the job
/// could not be done; a source that stops answering named as a timeout.
@Suite("exit status tells the truth")
struct ExitStatusTests {
    /// The frame `n` of `path` as ffmpeg decodes it, in RGB.
    func ffmpegFrame(_ path: String, _ n: Int) throws -> Data {
        try Proc.ffmpeg(["-i", path, "-vf", "select=eq(n\\,\(n))", "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"])
    }

    func rgb(_ png: String) throws -> Data {
        try Proc.ffmpeg(["-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
    }

    @Test("render of the last frames of an MP4, or --at near its end: exit 0, the right frame",
          arguments: [("counter.mp4", ["--frames", "95"], 95), ("counter.mp4", ["--frames", "93"], 93),
                      ("counter.mp4", ["--at", "3.15"], 94), ("faststart.mp4", ["--frames", "95"], 95),
                      ("counter_editlist.mp4", ["--frames", "80"], 80)])
    func lastFramesOfAnMP4(name: String, request: [String], frame: Int) throws {
        let scratch = try Scratch()
        let path = try Fixtures.path(name)
        let dir = scratch.path("out")
        let r = try CLI.run(["render", path] + request + ["--out", dir])
        #expect(r.status == 0, "stderr: \(r.stderrText)")
        #expect(r.stderrText.isEmpty, "stderr: \(r.stderrText)")
        let png = try #require(try FileManager.default.contentsOfDirectory(atPath: dir).first)
        #expect(try rgb("\(dir)/\(png)") == (try ffmpegFrame(path, frame)), "\(png)")
    }

    @Test("render past the end of what a truncated MP4 holds: still exit 2, truncated")
    func truncatedStillDamaged() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("truncated.mp4")
        let r = try CLI.run(["render", path, "--frames", "0,59", "--out", scratch.path("out")])
        #expect(r.status == 2, "stderr: \(r.stderrText)")
        #expect(r.stderrText.contains("truncated"), "stderr: \(r.stderrText)")
    }

    @Test("render of frames after an open-GOP keyframe: exit 0, ffmpeg's frames",
          arguments: [200, 219, 229])
    func openGOPSeek(frame: Int) throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter_open_long.ts")
        let dir = scratch.path("out")
        let r = try CLI.run(["render", path, "--frames", String(frame), "--out", dir])
        #expect(r.status == 0, "stderr: \(r.stderrText)")
        #expect(r.stderrText.isEmpty, "stderr: \(r.stderrText)")
        let png = "\(dir)/frame-\(String(format: "%06d", frame)).png"
        #expect(try rgb(png) == (try ffmpegFrame(path, frame)))
    }

    @Test("an MP4 with its index at the end, from a server that ignores byte ranges: exit 1, the cause")
    func serverWithoutByteRanges() throws {
        let fixtures = URL(fileURLWithPath: try Fixtures.path("counter.mp4")).deletingLastPathComponent().path
        let server = try HTTPFileServer(directory: fixtures, byteRanges: false)
        let scratch = try Scratch()
        let url = server.url("counter.mp4")
        let r = try CLI.run(["render", url, "--frames", "5", "--timeout", "5", "--out", scratch.path("out")], timeout: 60)
        #expect(r.status == 1, "stderr: \(r.stderrText)")
        #expect(r.stderrLines.count == 1, "stderr: \(r.stderrText)")
        #expect(r.stderrText.contains(url))
        #expect(r.stderrText.contains("the server ignores byte ranges and the index is at the end of the file"), "stderr: \(r.stderrText)")
        // With the index first, the same server is enough.
        let first = try CLI.run(["render", server.url("faststart.mp4"), "--frames", "5", "--timeout", "5", "--out", scratch.path("out")], timeout: 60)
        #expect(first.status == 0, "stderr: \(first.stderrText)")
    }

    @Test("a UDP stream that stops: the frames received, then exit 1 naming the timeout")
    func udpStreamEnds() throws {
        let port = try freeUDPLoopbackPort()
        let url = "udp://127.0.0.1:\(port)"
        // The sender plays the clip in real time (3.2 s) and stops; the reader joins a moment later.
        let sender = try BackgroundProcess("ffmpeg", ["-nostdin", "-hide_banner", "-loglevel", "error", "-re", "-i",
                                                      try Fixtures.path("counter_open.ts"), "-c", "copy", "-f", "mpegts", url])
        usleep(300_000)
        let r = try CLI.run(["framemd5", "--timeout", "1", url], timeout: 60)
        #expect(r.status == 1, "stderr: \(r.stderrText)")
        #expect(r.stderrLines.count == 1, "stderr: \(r.stderrText)")
        #expect(r.stderrText.contains("\(url): no answer within 1 s while reading"), "stderr: \(r.stderrText)")
        let frames = r.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(frames.count > 0)
        withExtendedLifetime(sender) {}
    }
}
