import Foundation
import ScanoutTestSupport
import Testing

/// `--player-type`, `SCANOUT_FAULTS` and the fallback as the command line shows them. The hardware
/// branch runs on the software stand-in for VA-API (`SCANOUT_FAULTS=hw-standin`).
@Suite("scanout --player-type and fallback")
struct PlayerTypeTests {
    static func env(_ faults: String?) -> [String: String] {
        var e = ProcessInfo.processInfo.environment
        e["SCANOUT_FAULTS"] = faults
        return e
    }

    static let cases: [(clip: String, fault: String, frame: Int, reason: String)] = [
        ("counter.mp4", "decode@40", 40, "3 consecutive decode errors (injected fault decode@40 (SCANOUT_FAULTS))"),
        ("counter.mp4", "export@45", 45, "DMA-BUF export failed: injected fault export@45 (SCANOUT_FAULTS)"),
        ("counter.mp4", "import@50", 50, "import failed: injected fault import@50 (SCANOUT_FAULTS)"),
        ("counter_open.ts", "export@30", 30, "DMA-BUF export failed: injected fault export@30 (SCANOUT_FAULTS)"),
        ("hevc10.mkv", "decode@12", 12, "3 consecutive decode errors (injected fault decode@12 (SCANOUT_FAULTS))"),
    ]

    @Test("framemd5 through a mid-stream hw failure equals ffmpeg's framemd5; one decoderFallback line", arguments: cases.indices)
    func fallbackParity(index: Int) throws {
        let c = Self.cases[index]
        let path = try Fixtures.path(c.clip)
        let r = try CLI.run(["framemd5", path, "--player-type", "hw"], environment: Self.env("hw-standin,\(c.fault)"))
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stderrLines == ["scanout: decoderFallback from=hw to=sw frame=\(c.frame) reason=\(c.reason)"])
        let theirs = String(decoding: try Proc.ffmpeg(["-i", path, "-map", "0:v:0", "-f", "framemd5", "-"]), as: UTF8.self)
        let mine = r.stdoutText.split(separator: "\n")
        let want = theirs.split(separator: "\n")
        #expect(mine.count == want.count)
        #expect(zip(mine, want).enumerated().first { $0.element.0 != $0.element.1 }.map { "line \($0.offset): \($0.element.0)" } == nil)
    }

    @Test("decode through an import failure writes the same raw frames as a software decode")
    func decodeParity() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter.mp4")
        let hw = try CLI.run(["decode", path, "-o", scratch.path("hw.yuv"), "--player-type", "hw"], environment: Self.env("hw-standin,import@20"))
        #expect(hw.status == 0, "\(hw.stderrText)")
        #expect(hw.stderrLines.first == "scanout: decoderFallback from=hw to=sw frame=20 reason=import failed: injected fault import@20 (SCANOUT_FAULTS)")
        let sw = try CLI.run(["decode", path, "-o", scratch.path("sw.yuv"), "--player-type", "sw"])
        #expect(sw.status == 0)
        let a = try Data(contentsOf: scratch.url.appendingPathComponent("hw.yuv"))
        let b = try Data(contentsOf: scratch.url.appendingPathComponent("sw.yuv"))
        #expect(a.count == 96 * 320 * 240 * 3 / 2)
        #expect(a == b)
    }

    @Test("--player-type hw --no-fallback: a mid-stream failure or no device is one clear line and exit 1")
    func noFallback() throws {
        let path = try Fixtures.path("counter.mp4")
        let mid = try CLI.run(["framemd5", path, "--player-type", "hw", "--no-fallback"], environment: Self.env("hw-standin,export@30"))
        #expect(mid.status == 1)
        #expect(mid.stderrLines == ["scanout: \(path): hw decoding failed at frame 30: DMA-BUF export failed: injected fault export@30 (SCANOUT_FAULTS) (--no-fallback given; drop it to continue in software)"])
        #expect(mid.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 30)

        let start = try CLI.run(["framemd5", path, "--player-type", "hw", "--no-fallback", "--device", "/nonexistent/renderD128"], environment: Self.env(nil))
        #expect(start.status == 1)
        #expect(start.stderrLines == ["scanout: \(path): player type hw unavailable: no usable render node (/nonexistent/renderD128: cannot open: No such file or directory) (--no-fallback given; drop it to fall back to software, or use --player-type sw)"])
        #expect(start.stdout.isEmpty)

        // The same without --no-fallback: software at once, said with --verbose.
        let falls = try CLI.run(["framemd5", path, "--player-type", "hw", "--device", "/nonexistent/renderD128", "-v"], environment: Self.env(nil))
        #expect(falls.status == 0)
        #expect(falls.stderrLines == ["scanout: decoder: sw, libavcodec h264 (software) (requested hw by --player-type; hw: no usable render node (/nonexistent/renderD128: cannot open: No such file or directory))"])
    }

    @Test("hw-init: the hardware decoder does not open, software takes over before the first frame")
    func hwInit() throws {
        let path = try Fixtures.path("counter.mp4")
        let r = try CLI.run(["framemd5", path, "--player-type", "hw", "-v"], environment: Self.env("hw-standin,hw-init"))
        #expect(r.status == 0)
        #expect(r.stderrLines == ["scanout: decoder: sw, libavcodec h264 (software) (requested hw by --player-type; hw: init failed: injected fault hw-init (SCANOUT_FAULTS))"])
    }

    @Test("precedence: the URL hint beats auto; --player-type beats the hint")
    func precedence() throws {
        let path = try Fixtures.path("counter.mp4")
        let byHint = try CLI.run(["framemd5", path + "?playerType=sw", "-v"], environment: Self.env("hw-standin,export@10"))
        #expect(byHint.status == 0)
        #expect(byHint.stderrLines == ["scanout: decoder: sw, libavcodec h264 (software) (requested sw by content hint)"])
        let byFlag = try CLI.run(["framemd5", path + "?playerType=sw", "--player-type", "hw", "-v"], environment: Self.env("hw-standin,export@10"))
        #expect(byFlag.status == 0)
        #expect(byFlag.stderrLines == [
            "scanout: decoder: hw, software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware) (requested hw by --player-type; hint playerType=sw overridden by --player-type)",
            "scanout: decoderFallback from=hw to=sw frame=10 reason=DMA-BUF export failed: injected fault export@10 (SCANOUT_FAULTS)",
        ])
        #expect(byHint.stdoutText == byFlag.stdoutText)
        let bad = try CLI.run(["framemd5", path + "?playerType=gpu"])
        #expect(bad.status == 1)
        #expect(bad.stderrLines == ["scanout: \(path)?playerType=gpu: playerType=gpu is not a player type (use auto, native, hw or sw)"])
    }

    @Test("SCANOUT_FAULTS that cannot be read: one line, exit 1")
    func badFaults() throws {
        let r = try CLI.run(["framemd5", try Fixtures.path("counter.mp4")], environment: Self.env("hw-standin,explode@3"))
        #expect(r.status == 1)
        #expect(r.stderrLines == ["scanout: SCANOUT_FAULTS: 'explode@3' is not a fault (known: hw-standin, hw-init, decode@N, export@N, import@N, hang-loop@N, audio-lost@N, audio-open@N)"])
    }

    @Test("play: the decision and the fallback in the summary, every frame presented")
    func play() throws {
        let r = try CLI.run(["play", "--untimed", "--player-type", "hw", try Fixtures.path("counter.mp4")], environment: Self.env("hw-standin,decode@40"))
        #expect(r.status == 0, "\(r.stderrText)")
        let lines = r.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("summary: 96 frames presented, 0 dropped, 96 decoded, 0 decode errors") == true)
        #expect(lines.last == "decoder: hw, software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware) (requested hw by --player-type); then decoderFallback from=hw to=sw frame=40 reason=3 consecutive decode errors (injected fault decode@40 (SCANOUT_FAULTS))")
        #expect(r.stderrLines.contains("scanout: decoderFallback from=hw to=sw frame=40 reason=3 consecutive decode errors (injected fault decode@40 (SCANOUT_FAULTS))"))
    }

    @Test("render --renderer gl: hw needs EGL's DMA-BUF import, which surfaceless llvmpipe refuses")
    func renderGLImportRefused() throws {
        let scratch = try Scratch()
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--frames", "3", "--renderer", "gl", "--player-type", "hw", "-v", "--out", scratch.url.path],
                            environment: Self.env("hw-standin"))
        #expect(r.status == 0, "\(r.stderrText)")
        let line = try #require(r.stderrLines.first { $0.hasPrefix("scanout: decoder:") })
        #expect(line.hasPrefix("scanout: decoder: sw, libavcodec h264 (software) (requested hw by --player-type; hw: import refused by EGL: EGL_EXT_image_dma_buf_import is missing ("))
        #expect(FileManager.default.fileExists(atPath: scratch.path("frame-000003.png")))
    }

    @Test("probe: a player types section with a verdict and reason per type")
    func probe() throws {
        let r = try CLI.run(["probe", try Fixtures.path("hevc10.mkv")], environment: Self.env(nil))
        #expect(r.status == 0)
        let lines = r.stdoutText.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex(of: "player types (for the input's stream):"))
        #expect(lines[start + 1] == "  native: unavailable: no KMS display")
        #expect(lines[start + 2].hasPrefix("  hw:     "))
        #expect(lines[start + 3] == "  sw:     available: libavcodec hevc (software)")
        #expect(lines[start + 4] == (lines[start + 2].hasPrefix("  hw:     available") ? "  auto -> hw" : "  auto -> sw"))
        // On a machine without render nodes (this project's CI) the reason is exact.
        let nodes = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri"))?.filter { $0.hasPrefix("renderD") } ?? []
        if nodes.isEmpty {
            #expect(lines[start + 2].hasPrefix("  hw:     unavailable: VA-API: no render node (/dev/dri/renderD* missing); NVDEC: "))
        }
        // With the stand-in, hw is available and named as what it is.
        let standIn = try CLI.run(["probe"], environment: Self.env("hw-standin"))
        #expect(standIn.stdoutText.contains("  hw:     available: software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware)\n  sw:     available: libavcodec (software)\n  auto -> hw\n"))
    }

    @Test("bench decode --player-type hw: refused with the reason where there is no device; measured (fps, CPU ms/frame) on the stand-in")
    func bench() throws {
        let path = try Fixtures.path("counter.mp4")
        let refused = try CLI.run(["bench", "decode", path, "--player-type", "hw", "--device", "/nonexistent/renderD128", "--runs", "1", "--warmup", "0"],
                                  environment: Self.env(nil))
        #expect(refused.status == 1)
        #expect(refused.stderrLines == ["scanout: \(path): --player-type hw unavailable: no usable render node (/nonexistent/renderD128: cannot open: No such file or directory)"])
        let r = try CLI.run(["bench", "decode", path, "--player-type", "hw", "--runs", "1", "--warmup", "0", "--threads", "1", "--json"],
                            environment: Self.env("hw-standin"))
        #expect(r.status == 0, "\(r.stderrText)")
        let root = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        #expect(root["playerType"] as? String == "hw")
        let input = try #require((root["inputs"] as? [[String: Any]])?.first)
        #expect(input["decoder"] as? String == "hw: software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware)")
        #expect(input["units"] as? Int == 96)
        let ours = try #require((input["results"] as? [[String: Any]])?.first)
        #expect((ours["values"] as? [Double])?.first ?? 0 > 0)
        #expect((ours["cpuMsPerUnit"] as? [Double])?.first ?? 0 > 0)
    }
}
