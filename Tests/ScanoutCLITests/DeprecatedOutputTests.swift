import Foundation
import ScanoutTestSupport
import Testing

/// `--output`, the 0.6.0 spelling of `-o`/`--out` on `decode`, `framemd5` and `render`: accepted
/// for one release with a warning on stderr that names the new spelling.
@Suite struct DeprecatedOutputTests {
    static let warning = "--output is deprecated"

    @Test("framemd5 --output FILE writes what -o writes, and warns")
    func framemd5() throws {
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4")
        let old = try CLI.run(["framemd5", clip, "--output", scratch.path("old.md5")])
        #expect(old.status == 0, "\(old.stderrText)")
        #expect(old.stderrText.contains(Self.warning) && old.stderrText.contains("use -o/--out"), "\(old.stderrText)")
        #expect(try CLI.run(["framemd5", clip, "-o", scratch.path("new.md5")]).stderrText.isEmpty)
        let a = try String(contentsOfFile: scratch.path("old.md5"), encoding: .utf8)
        let b = try String(contentsOfFile: scratch.path("new.md5"), encoding: .utf8)
        #expect(!a.isEmpty && a == b)
    }

    @Test("decode --output FILE writes the file, and warns")
    func decode() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["decode", try Fixtures.path("counter.mp4"), "--output", scratch.path("a.y4m"), "--frames", "2"])
        #expect(r.status == 0, "\(r.stderrText)")
        #expect(r.stderrText.contains(Self.warning) && r.stderrText.contains("use -o/--out"), "\(r.stderrText)")
        let y4m = try Data(contentsOf: URL(fileURLWithPath: scratch.path("a.y4m")))
        #expect(y4m.starts(with: Data("YUV4MPEG2 ".utf8)))
    }

    @Test("render --output DIR writes its PNGs there, and warns")
    func render() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--frames", "3", "--output", scratch.path("shots")])
        #expect(r.status == 0, "\(r.stderrText)")
        #expect(r.stderrText.contains(Self.warning) && r.stderrText.contains("use --out"), "\(r.stderrText)")
        #expect(FileManager.default.fileExists(atPath: scratch.path("shots/frame-000003.png")))
    }

    @Test("both spellings at once are a usage error")
    func both() throws {
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4")
        for args in [["framemd5", clip, "-o", scratch.path("a"), "--output", scratch.path("b")],
                     ["decode", clip, "--out", scratch.path("a"), "--output", scratch.path("b")],
                     ["render", clip, "--frames", "0", "--out", scratch.path("a"), "--output", scratch.path("b")]] {
            let r = try CLI.run(args)
            #expect(r.status == 1 && r.stderrText.contains("--output is its old spelling"), "\(args): \(r.stderrText)")
        }
    }
}
