import Foundation
import ScanoutTestSupport
import Testing

/// Usage errors exit 1, the status `--help` and the README document, in every subcommand.
@Suite("usage errors")
struct UsageErrorTests {
    static func usage(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try CLI.run(args, timeout: 30)
        #expect(r.status == 1, "\(args): exit \(r.status)", sourceLocation: sourceLocation)
        #expect(r.stdoutText.isEmpty, "\(args)", sourceLocation: sourceLocation)
        // ArgumentParser's message and usage hint, on stderr.
        #expect(r.stderrText.hasPrefix("Error: "), "\(args): \(r.stderrText)", sourceLocation: sourceLocation)
        #expect(r.stderrText.contains("Usage: scanout "), "\(args): \(r.stderrText)", sourceLocation: sourceLocation)
    }

    @Test("unknown options, bad values and failed validation exit 1 with the message and usage")
    func exitOne() throws {
        let clip = try Fixtures.path("counter.mp4")
        try Self.usage(["framemd5", clip, "--bogus"])
        try Self.usage(["decode", clip])                                   // -o missing
        try Self.usage(["render", clip])                                   // neither --frames nor --at
        try Self.usage(["render", clip, "--frames", "0", "--deep", "--renderer", "gl"])
        try Self.usage(["play", clip, "--rate", "9"])
        try Self.usage(["play", clip, "--rate", "fast"])
        try Self.usage(["probe", "--timeout", "0"])
        try Self.usage(["serve", "--port", "eighty"])
        try Self.usage(["bench", "decode", clip, "--bogus"])
        try Self.usage(["nosuchcommand"])
    }

    @Test("--help and --version still exit 0 on stdout")
    func help() throws {
        let h = try CLI.run(["render", "--help"], timeout: 30)
        #expect(h.status == 0)
        #expect(h.stdoutText.contains("USAGE: scanout render"))
        let root = try CLI.run(["--help"], timeout: 30)
        #expect(root.status == 0)
        #expect(root.stdoutText.contains("1 the job could not be done"))
        #expect(try CLI.run(["--version"], timeout: 30).status == 0)
    }
}

/// One meaning per option name: `--output` is a screen (play, serve), `--out` (`-o`) a file or
/// folder to write (decode, framemd5, render).
@Suite struct OptionNameTests {
    @Test("decode and framemd5 write to --out / -o; --output is not a file option there")
    func outIsAFile() throws {
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4")
        let md5 = try CLI.run(["framemd5", clip, "--out", scratch.path("a.md5")])
        #expect(md5.status == 0)
        #expect(FileManager.default.fileExists(atPath: scratch.path("a.md5")))
        let decode = try CLI.run(["decode", clip, "--out", scratch.path("a.y4m"), "--frames", "2"])
        #expect(decode.status == 0)
        #expect(FileManager.default.fileExists(atPath: scratch.path("a.y4m")))
        // --output, the old spelling, is accepted for one release (DeprecatedOutputTests), never beside --out.
        for command in ["framemd5", "decode"] {
            let r = try CLI.run([command, clip, "--out", scratch.path("b"), "--output", scratch.path("c")])
            #expect(r.status == 1)
            #expect(r.stderrText.contains("--output is its old spelling"), "\(r.stderrText)")
        }
    }
}
