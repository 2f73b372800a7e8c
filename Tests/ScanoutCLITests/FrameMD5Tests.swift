import Testing
import Foundation
import ScanoutTestSupport

@Suite("scanout framemd5")
struct FrameMD5Tests {
    static let clips = ["counter.mp4", "counter_open.ts", "counter_editlist.mp4", "counter_vfr.mkv", "counter.h264",
                        "hevc10.mkv", "vp9.webm", "av1.mkv", "odd.mkv", "rotated.mp4", "anamorphic.mp4"]

    @Test("data lines equal ffmpeg -f framemd5 line for line", arguments: clips)
    func parity(name: String) throws {
        let path = try Fixtures.path(name)
        let result = try CLI.run(["framemd5", path])
        #expect(result.status == 0, "exit \(result.status): \(result.stderrText)")
        #expect(result.stderrText.isEmpty, "stderr: \(result.stderrText)")
        let all = result.stdoutText.split(separator: "\n").map(String.init)
        let mine = all.filter { !$0.hasPrefix("#") }
        let theirs = try Proc.ffmpegFrameMD5Lines(path)
        try #require(!theirs.isEmpty)
        #expect(mine.count == theirs.count, "frame count")
        #expect(mine.map(md5Column) == theirs.map(md5Column), "md5 column")
        for (i, (a, b)) in zip(mine, theirs).enumerated() where a != b {
            Issue.record("\(name) line \(i): scanout '\(a)' vs ffmpeg '\(b)'")
        }
        // The header: the same lines as ffmpeg's (the #software line names the library, also the same).
        let theirHeader = String(decoding: try Proc.ffmpeg(["-i", path, "-map", "0:v:0", "-f", "framemd5", "-"]), as: UTF8.self)
            .split(separator: "\n").map(String.init).filter { $0.hasPrefix("#") }
        #expect(all.filter { $0.hasPrefix("#") } == theirHeader)
    }

    @Test("corrupt.mp4 (single-threaded on both sides): the same concealed frames as ffmpeg, exit 2")
    func corruptParity() throws {
        let path = try Fixtures.path("corrupt.mp4")
        let result = try CLI.run(["framemd5", "--threads", "1", path])
        #expect(result.status == 2)
        let mine = result.stdoutText.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
        let theirs = String(decoding: try Proc.ffmpeg(["-threads", "1", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"]), as: UTF8.self)
            .split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
        #expect(!mine.isEmpty)
        #expect(mine == theirs)
    }

    @Test("--frames A-B: the same lines as the full output's, header included",
          arguments: [("counter.mp4", 40, 60), ("counter_open.ts", 23, 49), ("counter_open_long.ts", 195, 229),
                      ("counter_editlist.mp4", 0, 10), ("counter_vfr.mkv", 35, 45), ("counter.h264", 10, 20), ("hevc10.mkv", 5, 12)])
    func range(name: String, first: Int, last: Int) throws {
        let path = try Fixtures.path(name)
        let full = try CLI.run(["framemd5", path])
        let part = try CLI.run(["framemd5", path, "--frames", "\(first)-\(last)"])
        #expect(part.status == 0, "exit \(part.status): \(part.stderrText)")
        let all = full.stdoutText.split(separator: "\n").map(String.init)
        let header = all.filter { $0.hasPrefix("#") }
        let lines = all.filter { !$0.hasPrefix("#") }
        let mine = part.stdoutText.split(separator: "\n").map(String.init)
        #expect(mine.filter { $0.hasPrefix("#") } == header)
        #expect(mine.filter { !$0.hasPrefix("#") } == Array(lines[first...last]))
        // And the full output is ffmpeg's (the parity test above), so the range is ffmpeg's too.
        #expect(Array(lines[first...last]).map(md5Column) == Array(try Proc.ffmpegFrameMD5Lines(path)[first...last]).map(md5Column))
    }

    @Test("--frames with a list, out of order and repeated, prints each frame once in order; past the end exits 1")
    func frameList() throws {
        let path = try Fixtures.path("counter_open_long.ts")
        let lines = try CLI.run(["framemd5", path]).stdoutText.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
        let part = try CLI.run(["framemd5", path, "--frames", "201,3,150-152,3"])
        #expect(part.status == 0, "\(part.stderrText)")
        #expect(part.stdoutText.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") } == [3, 150, 151, 152, 201].map { lines[$0] })
        let past = try CLI.run(["framemd5", path, "--frames", "228-231"])
        #expect(past.status == 1)
        #expect(past.stderrText.contains("230"), "\(past.stderrText)")
    }

    @Test("-o writes the same text to a file")
    func toFile() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("av1.mkv")
        let out = scratch.path("sums.txt")
        let toFile = try CLI.run(["framemd5", path, "-o", out])
        #expect(toFile.status == 0, "\(toFile.stderrText)")
        let toStdout = try CLI.run(["framemd5", path])
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written == toStdout.stdoutText)
        #expect(toFile.stdout.isEmpty)
    }
}

@Suite("http input")
struct HTTPInputTests {
    @Test("framemd5 and an exact frame over http equal the local file's", arguments: ["counter.mp4", "counter_open.ts"])
    func overHTTP(name: String) throws {
        let local = try Fixtures.path(name)
        let server = try HTTPFileServer(directory: Fixtures.directory.path)
        let remote = try CLI.run(["framemd5", server.url(name)])
        #expect(remote.status == 0, "exit \(remote.status): \(remote.stderrText)")
        let file = try CLI.run(["framemd5", local])
        #expect(remote.stdoutText == file.stdoutText)
        #expect(remote.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 96)
        let scratch = try Scratch()
        let r = try CLI.run(["render", server.url(name), "--frames", "50", "--out", scratch.url.path])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(FileManager.default.fileExists(atPath: scratch.path("frame-000050.png")))
    }
}
