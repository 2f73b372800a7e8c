import Foundation
import ScanoutTestSupport
import Testing

/// `probe INPUT --json`: the input's video stream, and the verdict on each player type for it.
@Suite("scanout probe INPUT --json")
struct ProbeJSONTests {
    static func probe(_ args: [String]) throws -> [String: Any] {
        let r = try CLI.run(["probe"] + args + ["--json"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdoutText.utf8)) as? [String: Any])
    }

    @Test("the stream: container, codec, profile, size, format, depth, rate, time base, duration, colour, shape")
    func stream() throws {
        let path = try Fixtures.path("counter.mp4")
        let root = try Self.probe([path])
        let input = try #require(root["input"] as? [String: Any])
        #expect(input["input"] as? String == path)
        #expect(input["container"] as? String == "mov,mp4,m4a,3gp,3g2,mj2")
        #expect(input["stream"] as? Int == 0)
        #expect(input["codec"] as? String == "h264")
        #expect(input["profile"] as? String == "High")
        #expect(input["width"] as? Int == 320 && input["height"] as? Int == 240)
        #expect(input["pixelFormat"] as? String == "yuv420p")
        #expect(input["bitDepth"] as? Int == 8)
        #expect(input["frameRate"] as? String == "30/1")
        #expect(input["framesPerSecond"] as? Double == 30)
        #expect(input["timeBase"] as? String == "1/15360")
        #expect(input["durationSeconds"] as? Double == 3.2)
        #expect(input["declaredFrameCount"] as? Int == 96)
        #expect(input["colorRange"] as? String != nil && input["colorSpace"] as? String != nil)
        #expect(input["matrixUsed"] as? String != nil)
        #expect(input["sampleAspectRatio"] as? String == "1/1")
        #expect(input["rotation"] as? Int == 0 && input["mirrored"] as? Bool == false)

        let hevc = try #require(try Self.probe([try Fixtures.path("hevc10.mkv")])["input"] as? [String: Any])
        #expect(hevc["container"] as? String == "matroska,webm")
        #expect(hevc["profile"] as? String == "Main 10")
        #expect(hevc["pixelFormat"] as? String == "yuv420p10le" && hevc["bitDepth"] as? Int == 10)
        #expect(hevc["colorRange"] as? String == "limited")
        let rotated = try #require(try Self.probe([try Fixtures.path("rotated.mp4")])["input"] as? [String: Any])
        #expect(rotated["rotation"] as? Int == 90)
    }

    @Test("the verdicts are for the input's stream, as the text form prints them")
    func verdicts() throws {
        let path = try Fixtures.path("hevc10.mkv")
        let root = try Self.probe([path])
        let types = try #require(root["playerTypes"] as? [[String: Any]])
        #expect(types.map { $0["type"] as? String } == ["native", "hw", "sw"])
        let sw = try #require(types.last)
        #expect(sw["available"] as? Bool == true)
        #expect(sw["reason"] as? String == "libavcodec hevc (software)")
        // Without an input: the machine's verdicts, and no input.
        let machine = try Self.probe([])
        #expect(machine["input"] == nil)
        #expect((machine["playerTypes"] as? [[String: Any]])?.last?["reason"] as? String == "libavcodec (software)")
        // The text form prints the same verdicts.
        let text = try CLI.run(["probe", path]).stdoutText
        for t in types {
            let line = "  \((t["type"] as! String) + ":")"
            let padded = line + String(repeating: " ", count: max(0, 10 - line.count))
            #expect(text.contains("\n" + padded + ((t["available"] as! Bool) ? "available" : "unavailable") + ": "), "\(t)")
        }
    }
}
