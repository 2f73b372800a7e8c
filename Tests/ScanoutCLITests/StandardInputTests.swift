import Foundation
import ScanoutTestSupport
import Testing

/// `-` as INPUT reads standard input, through a real pipe (not a seekable redirect).
@Suite("- as input: standard input")
struct StandardInputTests {
    /// `cat FILE | scanout ARGS...`.
    static func piped(_ file: String, _ args: [String]) throws -> ProcResult {
        let quoted = ([try CLI.binary.get()] + args).map { "'" + $0 + "'" }.joined(separator: " ")
        // cat's own complaint when scanout stops reading early (a broken pipe) is not scanout's output.
        return try Proc.run("/bin/sh", ["-c", "cat '\(file)' 2>/dev/null | \(quoted)"])
    }

    @Test("framemd5 - equals framemd5 FILE", arguments: ["counter_open.ts", "faststart.mp4", "counter.h264"])
    func framemd5(_ name: String) throws {
        let path = try Fixtures.path(name)
        let direct = try CLI.run(["framemd5", path])
        let piped = try Self.piped(path, ["framemd5", "-"])
        #expect(piped.status == 0, "exit \(piped.status): \(piped.stderrText)")
        #expect(direct.status == 0)
        #expect(piped.stdoutText == direct.stdoutText)
        #expect(piped.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }.count >= 60)
    }

    @Test("an MP4 with its index at the end cannot be read from a pipe: exit 1, the reason")
    func indexAtTheEnd() throws {
        let r = try Self.piped(try Fixtures.path("counter.mp4"), ["framemd5", "-"])
        #expect(r.status == 1)
        #expect(r.stderrLines.count == 1)
        #expect(r.stderrText.hasPrefix("scanout: pipe:0: "))
        #expect(r.stderrText.hasSuffix("; standard input cannot seek back: an MP4 or MOV read from it needs its index at the start (ffmpeg -movflags +faststart)\n"))
    }

    @Test("decode - -o - equals decode FILE -o -")
    func decode() throws {
        let path = try Fixtures.path("counter_open.ts")
        let direct = try CLI.run(["decode", path, "-o", "-", "--y4m"])
        let piped = try Self.piped(path, ["decode", "-", "-o", "-", "--y4m"])
        #expect(piped.status == 0, "exit \(piped.status): \(piped.stderrText)")
        #expect(piped.stdout.count == direct.stdout.count && piped.stdout == direct.stdout)
    }

    @Test("render - --frames: the same PNGs as from the file; --at: a clear error")
    func render() throws {
        let path = try Fixtures.path("counter_open.ts")
        let scratch = try Scratch()
        let direct = try CLI.run(["render", path, "--frames", "40,5", "--out", scratch.path("file")])
        #expect(direct.status == 0, "\(direct.stderrText)")
        let piped = try Self.piped(path, ["render", "-", "--frames", "40,5", "--out", scratch.path("pipe")])
        #expect(piped.status == 0, "exit \(piped.status): \(piped.stderrText)")
        for name in ["frame-000005.png", "frame-000040.png"] {
            let a = try Data(contentsOf: URL(fileURLWithPath: scratch.path("file/" + name)))
            let b = try Data(contentsOf: URL(fileURLWithPath: scratch.path("pipe/" + name)))
            #expect(a == b, "\(name)")
        }
        let past = try Self.piped(path, ["render", "-", "--frames", "200", "--out", scratch.path("past")])
        #expect(past.status == 1)
        #expect(past.stderrLines == ["scanout: pipe:0: frame 200 does not exist (the stream has 96 frames, 0...95)"])
        let at = try Self.piped(path, ["render", "-", "--at", "1", "--out", scratch.path("at")])
        #expect(at.status == 1)
        #expect(at.stderrLines == ["scanout: -: --at needs the input's index (the time of every frame), and standard input cannot seek back to it; give --frames N, or the file itself"])
    }

    @Test("probe - describes the stream; play - plays it")
    func probeAndPlay() throws {
        let path = try Fixtures.path("counter_open.ts")
        let probe = try Self.piped(path, ["probe", "-"])
        #expect(probe.status == 0, "\(probe.stderrText)")
        #expect(probe.stdoutText.contains("\n  container: mpegts\n"))
        #expect(probe.stdoutText.contains("\n  video:     stream 0, h264 (High), 320x240, yuv420p, 8-bit\n"))
        let play = try Self.piped(path, ["play", "-", "--output", "headless", "--renderer", "cpu", "--untimed"])
        #expect(play.status == 0, "\(play.stderrText)")
        #expect(play.stdoutText.contains("summary: 96 frames presented, 0 dropped"))
    }
}
