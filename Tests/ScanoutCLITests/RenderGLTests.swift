import Foundation
import ScanoutTestSupport
import Testing

/// Decodes a PNG to packed rgb24 with ffmpeg (an independent reader).
private func rgb24(ofPNG path: String) throws -> [UInt8] {
    [UInt8](try Proc.ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
}

@Suite("scanout render --renderer gl")
struct RenderGLTests {
    @Test("gl output stays within 3 of ffmpeg's rgb24 for the same frame", arguments: ["counter.mp4", "bt709.mp4", "hevc10.mkv", "rotated.mp4"])
    func agreesWithFFmpeg(name: String) throws {
        let path = try Fixtures.path(name)
        let scratch = try Scratch()
        let r = try CLI.run(["render", path, "--renderer", "gl", "--frames", "5", "--out", scratch.url.path])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let ours = try rgb24(ofPNG: scratch.path("frame-000005.png"))
        let theirs = [UInt8](try Proc.ffmpeg(["-i", path, "-vf", "select=eq(n\\,5)", "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
        try #require(ours.count == theirs.count, "sizes differ: \(ours.count) vs \(theirs.count)")
        let maxDiff = zip(ours, theirs).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(maxDiff <= 3, "max channel difference \(maxDiff)")
    }

    @Test("--frames with a range: every frame written, in order, each the frame asked for (pipelined readback)")
    func frameRange() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--renderer", "gl", "--frames", "40-50,3", "--out", scratch.url.path])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let numbers = [3] + Array(40...50)
        let lines = r.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.map { $0.split(separator: " ", omittingEmptySubsequences: true)[2] } == numbers.map { Substring(String($0)) })
        for n in numbers {
            let px = try rgb24(ofPNG: scratch.path("frame-\(String(repeating: "0", count: 6 - String(n).count))\(n).png"))
            try #require(px.count == 320 * 240 * 3)
            // The clip's frame-number band: bit b is the 32-pixel block b, read 16 rows down.
            var code = 0
            for bit in 0..<10 where px[(16 * 320 + bit * 32 + 16) * 3] > 128 { code |= 1 << bit }
            #expect(code == n)
        }
        let bad = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--frames", "9-2", "--out", scratch.url.path])
        #expect(bad.status != 0)
        #expect(bad.stderrText.contains("--frames: '9-2' is neither a frame number nor a range like 0-299"))
    }

    @Test("--every N keeps every Nth frame of --frames, each the frame asked for; bad values refused")
    func every() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--frames", "0-95", "--every", "30", "--out", scratch.url.path])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let written = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
        #expect(written == ["frame-000000.png", "frame-000030.png", "frame-000060.png", "frame-000090.png"])
        for n in [0, 30, 60, 90] {
            let px = try rgb24(ofPNG: scratch.path("frame-\(String(repeating: "0", count: 6 - String(n).count))\(n).png"))
            var code = 0
            for bit in 0..<10 where px[(16 * 320 + bit * 32 + 16) * 3] > 128 { code |= 1 << bit }
            #expect(code == n)
        }
        let zero = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--frames", "0-9", "--every", "0", "--out", scratch.url.path])
        #expect(zero.status == 1)
        #expect(zero.stderrText.contains("--every must be 1 or more, not 0"))
        let noFrames = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--at", "1", "--every", "2", "--out", scratch.url.path])
        #expect(noFrames.status == 1)
        #expect(noFrames.stderrText.contains("--every needs --frames"))
    }

    @Test("auto says which renderer it used")
    func autoReportsRenderer() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--renderer", "auto", "--frames", "0", "--out", scratch.url.path])
        #expect(r.status == 0)
        #expect(r.stderrLines.count == 1)
        #expect(r.stderrText.hasPrefix("renderer: gl (") || r.stderrText.hasPrefix("renderer: cpu (gl unavailable: "))
    }

    @Test("--size with fit letterboxes on the background colour")
    func letterbox() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--renderer", "gl", "--frames", "0", "--size", "640x360",
                             "--background", "ff0000", "--out", scratch.url.path])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let px = try rgb24(ofPNG: scratch.path("frame-000000.png"))
        try #require(px.count == 640 * 360 * 3)
        func at(_ x: Int, _ y: Int) -> [UInt8] { Array(px[(y * 640 + x) * 3..<(y * 640 + x) * 3 + 3]) }
        // 320x240 fits 640x360 as 480x360 at x = 80: red bars left and right, picture between.
        #expect(at(10, 180) == [255, 0, 0])
        #expect(at(630, 180) == [255, 0, 0])
        #expect(at(320, 180) != [255, 0, 0])
        // The frame-number band of frame 0 is black across the top of the picture.
        #expect(at(100, 10).allSatisfy { $0 < 40 })
    }

    @Test("the CPU renderer composites onto a canvas the way a KMS screen shows it")
    func cpuCanvas() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--frames", "0", "--renderer", "cpu", "--size", "640x360",
                             "--background", "203040", "--out", scratch.path("out")])
        #expect(r.status == 0, "\(r.stderrText)")
        let png = try rgb24(ofPNG: scratch.path("out/frame-000000.png"))
        #expect(png.count == 640 * 360 * 3)
        func at(_ x: Int, _ y: Int) -> [UInt8] { Array(png[(3 * (y * 640 + x))..<(3 * (y * 640 + x) + 3)]) }
        // 320x240 fitted into 640x360: 480x360 at x = 80; the background on both sides.
        #expect(at(40, 180) == [0x20, 0x30, 0x40])
        #expect(at(600, 180) == [0x20, 0x30, 0x40])
        #expect(at(320, 180) != [0x20, 0x30, 0x40])
        // The picture itself is the frame scaled 1.5x: the frame-number band (black for frame 0)
        // spans the top 48 rows.
        #expect(at(320, 20).allSatisfy { $0 < 40 })
    }

    @Test("layout options with the CPU renderer need a canvas size")
    func layoutNeedsSize() throws {
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--frames", "0", "--renderer", "cpu", "--scale", "fill"])
        #expect(r.status != 0)
        #expect(r.stderrText.contains("--scale, --background and --overlay need --size (the canvas) with --renderer cpu"))
    }
}
