import Foundation
import ScanoutTestSupport
import Testing

// Serialized: each test plays in real time, and counts drops.
@Suite("scanout play --layout FILE", .serialized)
struct PlayLayoutTests {
    @Test("a clip filling the screen and a picture-in-picture (an image for 1 s, then the clip): each zone plays its playlist through, no frame dropped")
    func mainAndInset() throws {
        let scratch = try Scratch()
        let (clip, still, layout) = try layoutInputs(in: scratch)
        try """
        {"width": 640, "height": 480, "zones": [
          {"id": "main", "playlist": ["\(clip)"], "repeat": "none", "scaling": "fill"},
          {"id": "pip", "x": "60%", "y": "60%", "width": 200, "height": 150, "z": 1, "border": {"width": 3, "color": "FF0000"},
           "playlist": [{"source": "\(still)", "duration": 1}, "\(clip)"], "repeat": "none"}
        ]}
        """.write(toFile: layout, atomically: true, encoding: .utf8)
        let r = try CLI.run(["play", "--layout", layout, "--output", "headless"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stderrText.contains("layout \(layout): 2 zones on a 640x480 headless screen (cpu)"))
        #expect(r.stdoutText.contains("zone main: ended, 96 frames presented, 0 dropped"), "\(r.stdoutText)")
        // The image 5 times (every 0.24 s for 1 s), then the clip's 96 frames.
        #expect(r.stdoutText.contains("zone pip: ended, 101 frames presented, 0 dropped"), "\(r.stdoutText)")
        let composed = try #require(r.stdoutText.split(separator: "\n").first { $0.hasPrefix("layout: ") })
        let count = Int(composed.split(separator: " ")[1]) ?? 0
        #expect(count > 60, "\(composed)")
    }

    @Test("--layout with an input, or a layout without a size for a headless screen, is refused")
    func refusals() throws {
        let scratch = try Scratch()
        let layout = scratch.path("layout.json")
        try #"{"zones": [{"id": "a", "playlist": ["x.mp4"]}]}"#.write(toFile: layout, atomically: true, encoding: .utf8)
        let noSize = try CLI.run(["play", "--layout", layout, "--output", "headless"])
        #expect(noSize.status == 1 && noSize.stderrText.contains("a headless screen has no mode; give width and height in the layout"))
        let both = try CLI.run(["play", "x.mp4", "--layout", layout])
        #expect(both.status == 1 && both.stderrText.contains("--layout plays the zones' playlists: no input and no --channels"))
        // Each item's token is verified first: one that does not verify fails naming the item.
        try #"{"width": 64, "height": 64, "zones": [{"id": "a"}, {"id": "b", "playlist": ["x.mp4", {"source": "y.mp4", "token": "not-a-token"}]}]}"#
            .write(toFile: layout, atomically: true, encoding: .utf8)
        let badToken = try CLI.run(["play", "--layout", layout, "--output", "headless"])
        #expect(badToken.status == 1 && badToken.stderrText.contains("--layout: zones[1].playlist[1]: "), "\(badToken.stderrText)")
        let token = try CLI.run(["play", "--layout", layout, "--token", "x"])
        #expect(token.status == 1 && token.stderrText.contains("--token: a layout's items carry their own tokens"))
    }

    @Test("--output kms opens the screen as play does: with no card, the KMS error; --output auto with no card composes headless",
          .enabled(if: !FileManager.default.fileExists(atPath: "/dev/dri"), "a machine with no DRM card (the vkms guest step tests one)"))
    func kmsAsked() throws {
        let scratch = try Scratch()
        let (clip, _, layout) = try layoutInputs(in: scratch)
        try #"{"width": 320, "height": 240, "zones": [{"id": "a", "playlist": ["\#(clip)"], "repeat": "none"}]}"#
            .write(toFile: layout, atomically: true, encoding: .utf8)
        let kms = try CLI.run(["play", "--layout", layout, "--output", "kms"])
        #expect(kms.status == 1 && kms.stderrText.contains("no KMS device: /dev/dri has no card that opens (use --output headless)"), "\(kms.stderrText)")
        let auto = try CLI.run(["play", "--layout", layout])
        #expect(auto.status == 0, "\(auto.stderrText)")
        #expect(auto.stderrText.contains("layout \(layout): 1 zones on a 320x240 headless screen"))
        // Every frame of the clip presented or (on a loaded machine) dropped: the zone played it through.
        let zone = try #require(auto.stdoutText.split(separator: "\n").first { $0.hasPrefix("zone a: ended, ") }, "\(auto.stdoutText)")
        let counts = zone.split(separator: " ").compactMap { Int($0) }
        #expect(counts.count == 2 && counts[0] + counts[1] == 96, "\(zone)")
    }
}
