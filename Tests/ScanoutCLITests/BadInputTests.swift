import Testing
import Foundation
import ScanoutTestSupport

/// Bad input through the command line: a non-zero exit, exactly one line on stderr naming the
/// input, and the cause in words.
@Suite("scanout with bad input")
struct BadInputTests {
    /// Checks the one-line error and returns it.
    @discardableResult
    func expectOneLineError(_ r: ProcResult, naming input: String, phrase: String, status: Int32? = nil,
                            sourceLocation: SourceLocation = #_sourceLocation) -> String {
        if let status {
            #expect(r.status == status, "exit status; stderr: \(r.stderrText)", sourceLocation: sourceLocation)
        } else {
            #expect(r.status != 0, "exit status", sourceLocation: sourceLocation)
        }
        #expect(r.stderrLines.count == 1, "stderr must be one line: \(r.stderrText.debugDescription)", sourceLocation: sourceLocation)
        #expect(r.stderrText.hasSuffix("\n"), sourceLocation: sourceLocation)
        let line = r.stderrLines.first ?? ""
        #expect(line.contains(input), "line does not name \(input): \(line)", sourceLocation: sourceLocation)
        #expect(line.lowercased().contains(phrase), "line lacks '\(phrase)': \(line)", sourceLocation: sourceLocation)
        return line
    }

    @Test("a missing file: no such file")
    func missing() throws {
        let scratch = try Scratch()
        let path = scratch.path("nothing-here.mp4")
        expectOneLineError(try CLI.run(["framemd5", path]), naming: path, phrase: "no such file", status: 1)
    }

    @Test("a directory: is a directory")
    func directory() throws {
        let scratch = try Scratch()
        expectOneLineError(try CLI.run(["framemd5", scratch.url.path]), naming: scratch.url.path, phrase: "is a directory", status: 1)
    }

    @Test("bad files: the cause in words",
          arguments: [("unknown_codec.mkv", "unsupported codec"), ("truncated_noindex.mp4", "moov atom not found"),
                      ("random.bin", "not a media file"), ("audio_only.wav", "no video stream")])
    func badFiles(name: String, phrase: String) throws {
        let path = try Fixtures.path(name)
        let r = try CLI.run(["framemd5", path])
        expectOneLineError(r, naming: path, phrase: phrase, status: 1)
        #expect(r.stdout.isEmpty, "nothing on stdout")
    }

    @Test("truncated.mp4: exit 2, truncated, and the frames it holds on stdout")
    func truncated() throws {
        let path = try Fixtures.path("truncated.mp4")
        let r = try CLI.run(["framemd5", path])
        expectOneLineError(r, naming: path, phrase: "truncated", status: 2)
        let lines = r.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.count > 0 && lines.count < 96, "\(lines.count) frames")
    }

    @Test("corrupt.mp4: exit 2, corrupt bitstream, and framemd5 lines on stdout")
    func corrupt() throws {
        let path = try Fixtures.path("corrupt.mp4")
        let r = try CLI.run(["framemd5", path])
        expectOneLineError(r, naming: path, phrase: "corrupt bitstream", status: 2)
        let lines = r.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.count > 80, "\(lines.count) frames")
    }

    @Test("a server that never answers: gives up after --timeout")
    func silentServer() throws {
        let listener = try SilentListener()
        let url = "http://127.0.0.1:\(listener.port)/clip.mp4"
        let r = try CLI.run(["framemd5", "--timeout", "1", url], timeout: 30)
        expectOneLineError(r, naming: url, phrase: "no answer within 1 s", status: 1)
        #expect(r.seconds < 5, "took \(r.seconds) s")
        withExtendedLifetime(listener) {}
    }

    @Test("a refused connection: one line naming the URL")
    func refused() throws {
        let port = try refusedLoopbackPort()
        let url = "http://127.0.0.1:\(port)/clip.mp4"
        let r = try CLI.run(["framemd5", "--timeout", "2", url], timeout: 30)
        #expect(r.status != 0)
        #expect(r.stderrLines.count == 1, "stderr: \(r.stderrText)")
        #expect(r.stderrText.contains(url))
        #expect(r.seconds < 5)
    }

    @Test("render --frames 500 on a 96-frame clip: frame 500 does not exist")
    func frameOutOfRange() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter.mp4")
        let r = try CLI.run(["render", path, "--frames", "500", "--out", scratch.path("out")])
        expectOneLineError(r, naming: path, phrase: "frame 500 does not exist", status: 1)
    }

    @Test("render --at past the end: outside the stream")
    func timeOutOfRange() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter.mp4")
        let r = try CLI.run(["render", path, "--at", "10", "--out", scratch.path("out")])
        expectOneLineError(r, naming: path, phrase: "outside the stream", status: 1)
    }

    @Test("decode of a damaged file: exit 2 and the error line", arguments: ["truncated.mp4", "corrupt.mp4"])
    func decodeDamaged(name: String) throws {
        let scratch = try Scratch()
        let path = try Fixtures.path(name)
        let r = try CLI.run(["decode", path, "-o", scratch.path("out.yuv")])
        #expect(r.status == 2)
        #expect(r.stderrLines.last?.contains(path) == true, "stderr: \(r.stderrText)")
    }
}
