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
