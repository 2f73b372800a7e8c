import Foundation
import ScanoutTestSupport
import Testing

@Suite("scanout render --layout FILE --at T")
struct RenderLayoutTests {
    /// The rgb24 pixels of a PNG, row after row (ffmpeg decodes it).
    static func pixels(_ png: String) throws -> [UInt8] {
        [UInt8](try Proc.ffmpeg(["-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
    }

    /// The `w`×`h` part at `x`,`y` of rgb24 pixels `width` wide.
    static func crop(_ p: [UInt8], width: Int, x: Int, y: Int, w: Int, h: Int) -> [UInt8] {
        var out: [UInt8] = []
        for row in y..<(y + h) {
            let start: Int = 3 * (row * width + x)
            out += p[start..<(start + 3 * w)]
        }
        return out
    }

    @Test("a 2x2 layout at 1.5 s is, byte for byte, each zone's own render --at placed in its quadrant, each zone on its own playlist")
    func twoByTwoIsItsZones() throws {
        let scratch = try Scratch()
        let (clip, still, layout) = try layoutInputs(in: scratch)
        try """
        {"width": 640, "height": 480, "background": "101010", "zones": [
          {"id": "a", "x": 0, "y": 0, "width": "50%", "height": "50%", "playlist": ["\(clip)"]},
          {"id": "b", "x": 320, "y": 0, "width": 320, "height": 240, "playlist": [{"source": "\(still)", "duration": 1}, "\(clip)"]},
          {"id": "c", "x": 0, "y": "50%", "width": 320, "height": 240, "scaling": "fill", "playlist": ["\(still)"]},
          {"id": "d", "x": "50%", "y": "50%", "width": "50%", "height": "50%", "playlist": ["\(clip)"], "repeat": "none"}
        ]}
        """.write(toFile: layout, atomically: true, encoding: .utf8)
        let out = scratch.path("out")
        let r = try CLI.run(["render", "--layout", layout, "--at", "1.5", "--out", out])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let composed = try Self.pixels(out + "/layout-at-1.5s.png")
        #expect(composed.count == 640 * 480 * 3)
        // Zone by zone: what render --at T --size 320x240 gives of the item the zone is in.
        let expected: [(x: Int, y: Int, input: String, at: Double, scale: String)] = [
            (0, 0, clip, 1.5, "fit"), (320, 0, clip, 0.5, "fit"), (0, 240, still, 1.5, "fill"), (320, 240, clip, 1.5, "fit"),
        ]
        for (i, e) in expected.enumerated() {
            let dir = scratch.path("zone\(i)")
            var args = ["render", e.input, "--at", "\(e.at)", "--size", "320x240", "--scale", e.scale, "--out", dir]
            if e.input == still { args += ["--renderer", "cpu"] }
            let z = try CLI.run(args)
            #expect(z.status == 0, "zone \(i): \(z.stderrText)")
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: dir).first)
            let own = try Self.pixels(dir + "/" + name)
            #expect(Self.crop(composed, width: 640, x: e.x, y: e.y, w: 320, h: 240) == own, "zone \(i)")
        }
    }

    @Test("scaled zones (up, down, odd sizes, turned): --renderer gl draws the layout byte for byte as the CPU does")
    func glEqualsCPUScaled() throws {
        let scratch = try Scratch()
        let (clip, _, layout) = try layoutInputs(in: scratch)
        try """
        {"width": 800, "height": 600, "background": "203040", "zones": [
          {"id": "big", "x": 0, "y": 0, "width": 533, "height": 400, "scaling": "stretch", "playlist": ["\(clip)"]},
          {"id": "small", "x": 533, "y": 0, "width": 267, "height": 150, "playlist": ["\(clip)"]},
          {"id": "fill", "x": 533, "y": 150, "width": 267, "height": 250, "scaling": "fill", "playlist": ["\(clip)"]},
          {"id": "turned", "x": 0, "y": 400, "width": 800, "height": 200, "playlist": [{"source": "\(clip)", "rotation": 90}]}
        ]}
        """.write(toFile: layout, atomically: true, encoding: .utf8)
        var pictures: [[UInt8]] = []
        for renderer in ["cpu", "gl"] {
            let out = scratch.path(renderer)
            let r = try CLI.run(["render", "--layout", layout, "--at", "1.2", "--renderer", renderer, "--out", out])
            #expect(r.status == 0, "\(renderer): exit \(r.status): \(r.stderrText)")
            pictures.append(try Self.pixels(out + "/layout-at-1.2s.png"))
        }
        #expect(pictures[0].count == 800 * 600 * 3)
        let same = pictures[0] == pictures[1]
        #expect(same, "\(zip(pictures[0], pictures[1]).filter { $0 != $1 }.count) bytes differ")
    }

    @Test("a ticker zone under a clip: 100 px further left 0.5 s later, over the zone's background")
    func ticker() throws {
        let scratch = try Scratch()
        let (clip, _, layout) = try layoutInputs(in: scratch)
        try """
        {"width": 640, "height": 300, "zones": [
          {"id": "clip", "width": 320, "height": 240, "playlist": ["\(clip)"]},
          {"id": "news", "y": 240, "width": "100%", "height": 60, "background": "000040",
           "text": {"text": "Trains to the airport every ten minutes", "size": 30, "color": "FFFFFF", "scroll": 200}}
        ]}
        """.write(toFile: layout, atomically: true, encoding: .utf8)
        let out = scratch.path("out")
        let r = try CLI.run(["render", "--layout", layout, "--at", "0.5,1", "--out", out])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        /// The leftmost column of the ticker band with text in it (bright against the dark blue).
        func leftEdge(_ png: String) throws -> Int {
            let p = try Self.pixels(png)
            for x in 0..<640 {
                for y in 250..<290 where p[3 * (y * 640 + x)] > 128 { return x }
            }
            return -1
        }
        let a = try leftEdge(out + "/layout-at-0.5s.png"), b = try leftEdge(out + "/layout-at-1.0s.png")
        #expect(abs(a - 540) <= 3 && abs((a - b) - 100) <= 2, "\(a) \(b)")
        let p = try Self.pixels(out + "/layout-at-0.5s.png")
        #expect(Array(p[(3 * (295 * 640 + 5))..<(3 * (295 * 640 + 5) + 3)]) == [0, 0, 64])
    }

    @Test("a layout that cannot be used is named with its field; --layout takes no input")
    func refusals() throws {
        let scratch = try Scratch()
        let layout = scratch.path("bad.json")
        try #"{"zones": [{"id": "a", "width": "150%", "playlist": ["x.mp4"]}]}"#.write(toFile: layout, atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "--layout", layout, "--at", "1", "--size", "640x480"])
        #expect(r.status == 1)
        #expect(r.stderrText.contains("zones[0].width: must be pixels (a number) or a share such as \"25%\" (0% to 100%) (got \"150%\")"), "\(r.stderrText)")
        let both = try CLI.run(["render", "x.mp4", "--layout", layout, "--at", "1"])
        #expect(both.status == 1 && both.stderrText.contains("--layout takes --at times, no input and no --frames"))
    }
}
