import Foundation
import ScanoutTestSupport
import Testing

@Suite("scanout play --output headless --renderer")
struct PlayHeadlessTests {
    @Test("gl: every frame drawn on the GPU path, renderer and EGL platform in the summary, nothing read back")
    func gl() throws {
        let r = try CLI.run(["play", try Fixtures.path("counter.mp4"), "--output", "headless", "--renderer", "gl", "--untimed"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stderrLines.contains("renderer: gl (asked for)"))
        let out = r.stdoutText
        #expect(out.contains("summary: 96 frames presented, 0 dropped"))
        let line = try #require(out.split(separator: "\n").first { $0.hasPrefix("renderer: ") })
        #expect(line.hasPrefix("renderer: gl: ") && line.contains("; EGL surfaceless; ") && line.hasSuffix("; 0 readbacks; asked for"))
    }

    @Test("gl on the EGL device platform, forced with --egl-platform device")
    func device() throws {
        let r = try CLI.run(["play", try Fixtures.path("counter.mp4"), "--output", "headless", "--renderer", "gl",
                             "--egl-platform", "device", "--untimed"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stdoutText.contains("; EGL device 0 of "))
    }

    @Test("auto and cpu say which renderer draws and why")
    func autoAndCPU() throws {
        let path = try Fixtures.path("counter.mp4")
        let cpu = try CLI.run(["play", path, "--output", "headless", "--renderer", "cpu", "--untimed"])
        #expect(cpu.status == 0)
        #expect(cpu.stderrLines.contains("renderer: cpu (asked for)"))
        #expect(cpu.stdoutText.contains("renderer: cpu (swscale); 0 readbacks; asked for\n"))
        let auto = try CLI.run(["play", path, "--output", "headless", "--untimed"])
        #expect(auto.status == 0)
        let line = try #require(auto.stderrLines.first { $0.hasPrefix("renderer: ") })
        // llvmpipe here: the CPU renderer, with the reason; on a GPU, gl.
        #expect(line.hasPrefix("renderer: cpu (auto: GLES is llvmpipe") || line.hasPrefix("renderer: gl (auto: GLES on hardware, "), "\(line)")
        // The summary repeats the reason.
        let reason = String(line.dropFirst("renderer: cpu (".count).dropLast())
        #expect(auto.stdoutText.contains("; 0 readbacks; \(reason)\n"))
        #expect(try CLI.run(["play", path, "--output", "headless", "--egl-platform", "nowhere"]).status != 0)
    }

    @Test("probe names the headless EGL platform, in text and JSON")
    func probe() throws {
        let text = try CLI.run(["probe"])
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("\n  headless platform: surfaceless\n"))
        let json = try CLI.run(["probe", "--json"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutText.utf8)) as? [String: Any])
        let egl = try #require((root["egl"] as? [[String: Any]])?.first)
        #expect(egl["platform"] as? String == "surfaceless")
        let choice = try #require(egl["headlessPlatform"] as? [String: Any])
        #expect(choice["platform"] as? String == "surfaceless")
        #expect((choice["passedOver"] as? [Any])?.isEmpty == true)
    }
}

/// play's figures are ones bench and ffmpeg can be compared with: frames over wall time, and
/// CPU time per frame of every thread, not the wait inside the decoder call.
@Suite struct PlaySummaryRateTests {
    @Test("the rate is frames decoded over wall time: about 30 fps for a 30 fps clip played in real time")
    func rateIsFramesOverWallTime() throws {
        let r = try CLI.run(["play", try Fixtures.path("counter.mp4"), "--output", "headless"])
        #expect(r.status == 0, "\(r.stderrText)")
        let lines = r.stdoutText.split(separator: "\n").map(String.init)
        let rate = try #require(lines.first { $0.hasPrefix("rate: ") })
        let time = try #require(lines.first { $0.hasPrefix("time: ") })
        func number(after prefix: String, in line: String) -> Double? {
            guard let range = line.range(of: prefix) else { return nil }
            return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
        let fps = try #require(number(after: "rate: ", in: rate))
        let wall = try #require(number(after: " s of media in ", in: time))
        let cpu = try #require(number(after: "CPU ", in: rate))
        #expect(abs(fps - 96 / wall) <= 0.02 * fps, "\(rate) / \(time)")
        #expect(fps > 25 && fps < 31, "\(rate)")
        #expect(cpu > 0)
        #expect(rate.contains("ms/frame (all threads)"))
    }
}
