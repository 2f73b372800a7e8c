import Foundation
import ScanoutTestSupport
import Testing

@Suite("scanout play --layout FILE")
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
    }
}
