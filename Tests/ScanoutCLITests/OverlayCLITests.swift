import Foundation
import ScanoutTestSupport
import Testing

/// A PNG decoded to packed rgb24 by ffmpeg.
private func rgb24(ofPNG path: String) throws -> [UInt8] {
    [UInt8](try Proc.ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
}

@Suite("--overlay, --overlay-opacity, --overlay-position on render, play and serve")
struct OverlayCLITests {
    @Test("render: the CPU and GL renderers draw the same overlay (within 3); its half-opaque pixels are the blend, the rest the video")
    func renderBothRenderers() throws {
        let scratch = try Scratch()
        let logo = try makeLogoPNG(in: scratch)
        let clip = try Fixtures.path("counter.mp4")
        var pictures: [String: [UInt8]] = [:]
        for (name, extra) in [("plain", [String]()), ("cpu", ["--overlay", logo]), ("gl", ["--overlay", logo])] {
            let dir = scratch.path(name)
            let r = try CLI.run(["render", clip, "--frames", "3", "--size", "320x240", "--renderer", name == "gl" ? "gl" : "cpu",
                                 "--overlay-position", "bottom-right:8", "--overlay-opacity", "0.5", "--out", dir] + extra)
            #expect(r.status == 0, "\(name): exit \(r.status): \(r.stderrText)")
            pictures[name] = try rgb24(ofPNG: dir + "/frame-000003.png")
        }
        let plain = try #require(pictures["plain"]), cpu = try #require(pictures["cpu"]), gl = try #require(pictures["gl"])
        try #require(cpu.count == 320 * 240 * 3 && gl.count == cpu.count)
        let maxDiff = zip(cpu, gl).map { abs(Int($0) - Int($1)) }.max() ?? 99
        #expect(maxDiff <= 3, "CPU vs GL: max channel difference \(maxDiff)")
        // The logo: 20x10 at (292, 222); its left half opaque red at opacity 0.5, its right half transparent.
        let o = 3 * (225 * 320 + 295)
        #expect(Array(cpu[o..<o + 3]) == [blended(255, over: plain[o], opacity: 0.5), blended(0, over: plain[o + 1], opacity: 0.5),
                                          blended(0, over: plain[o + 2], opacity: 0.5)])
        let t = 3 * (225 * 320 + 305), outside = 3 * (221 * 320 + 295)
        #expect(Array(cpu[t..<t + 3]) == Array(plain[t..<t + 3]) && Array(cpu[outside..<outside + 3]) == Array(plain[outside..<outside + 3]))
    }

    @Test("play headless with an overlay on either renderer: every frame shown")
    func play() throws {
        let scratch = try Scratch()
        let logo = try makeLogoPNG(in: scratch)
        for renderer in ["cpu", "gl"] {
            let r = try CLI.run(["play", try Fixtures.path("counter.mp4"), "--output", "headless", "--renderer", renderer, "--untimed",
                                 "--overlay", logo, "--overlay-position", "top-right:4", "--overlay-opacity", "0.8"])
            #expect(r.status == 0, "\(renderer): \(r.stderrText)")
            #expect(r.stdoutText.contains("summary: 96 frames presented, 0 dropped"), "\(renderer): \(r.stdoutText)")
        }
    }

    @Test("refusals: an unreadable image (the file named, exit 1), a bad position or opacity (usage errors naming the option)")
    func refusals() throws {
        let clip = try Fixtures.path("counter.mp4")
        let missing = try CLI.run(["play", clip, "--output", "headless", "--untimed", "--overlay", "/nonexistent/logo.png"])
        #expect(missing.status == 1 && missing.stderrText.contains("/nonexistent/logo.png"), "\(missing.stderrText)")
        for (command, args) in [("play", [clip, "--output", "headless"]), ("render", [clip, "--frames", "0", "--renderer", "gl"]), ("serve", ["--no-socket"])] {
            let position = try CLI.run([command] + args + ["--overlay-position", "middle"])
            #expect(position.status == 1 && position.stderrText.contains("--overlay-position"), "\(command): \(position.stderrText)")
            let opacity = try CLI.run([command] + args + ["--overlay-opacity", "2"])
            #expect(opacity.status == 1 && opacity.stderrText.contains("--overlay-opacity"), "\(command): \(opacity.stderrText)")
        }
    }
}
