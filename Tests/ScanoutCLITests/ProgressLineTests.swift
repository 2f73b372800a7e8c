import Foundation
import ScanoutTestSupport
import Testing

/// The progress line of long frame jobs: shown on a terminal (run here under `script`, which gives
/// the command a pseudo-terminal), never when stderr is not one, never with --quiet.
@Suite struct ProgressLineTests {
    /// `scanout ARGS` on a pseudo-terminal; what it wrote there (stdout and stderr together).
    static func onTerminal(_ args: [String]) throws -> String {
        let binary = try CLI.binary.get()
        let command = ([binary] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let r = try Proc.run(try Proc.which("script"), ["-qec", command, "/dev/null"])
        #expect(r.status == 0, "\(r.stderrText)")
        return r.stdoutText
    }

    @Test("framemd5, decode and render show frame N / total on a terminal, ending at the last frame", arguments: ["framemd5", "decode", "render"])
    func shownOnATerminal(command: String) throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter.mp4")
        let args: [String] = switch command {
        case "framemd5": ["framemd5", path, "-o", scratch.path("out.md5")]
        case "decode": ["decode", path, "-o", scratch.path("out.y4m")]
        default: ["render", path, "--frames", "0-9", "--out", scratch.path("png")]
        }
        let text = try Self.onTerminal(args)
        let total = command == "render" ? 10 : 96
        #expect(text.contains("\r\u{1B}[Kframe 1 / \(total) ("), "\(text.debugDescription)")
        #expect(text.contains("\r\u{1B}[Kframe \(total) / \(total) (100%)"), "\(text.debugDescription)")
        let quiet = try Self.onTerminal(args + ["--quiet"])
        #expect(!quiet.contains("frame 1 / "), "\(quiet.debugDescription)")
    }

    @Test("no progress line when stderr is not a terminal")
    func notOnAPipe() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["framemd5", try Fixtures.path("counter.mp4"), "-o", scratch.path("out.md5")])
        #expect(r.status == 0)
        #expect(r.stderrText.isEmpty)
    }
}
