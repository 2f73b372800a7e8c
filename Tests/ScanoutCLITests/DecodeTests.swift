import Testing
import Foundation
import ScanoutTestSupport

@Suite("scanout decode")
struct DecodeTests {
    static let frameBytes = 320 * 240 * 3 / 2

    @Test("-o X.y4m writes a YUV4MPEG2 header and 96 frames")
    func y4m() throws {
        let scratch = try Scratch()
        let out = scratch.path("counter.y4m")
        let result = try CLI.run(["decode", try Fixtures.path("counter.mp4"), "-o", out])
        #expect(result.status == 0, "\(result.stderrText)")
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(data.starts(with: Array("YUV4MPEG2 W320 H240".utf8)))
        let header = try #require(data.firstIndex(of: 0x0A))
        // Every frame: "FRAME\n" and one 4:2:0 picture.
        let marker = Array("FRAME\n".utf8)
        var frames = 0
        var i = header + 1
        while i + marker.count <= data.count, Array(data[i..<i + marker.count]) == marker {
            frames += 1
            i += marker.count + Self.frameBytes
        }
        #expect(frames == 96)
        #expect(i == data.count, "bytes after the last frame")
        // The pictures are ffmpeg's raw frames.
        let raw = try Proc.ffmpeg(["-i", try Fixtures.path("counter.mp4"), "-f", "rawvideo", "-"])
        let start = header + 1 + marker.count
        #expect(Array(data[start..<start + Self.frameBytes]) == Array(raw.prefix(Self.frameBytes)))
    }

    @Test("Y4M output equals ffmpeg's yuv4mpegpipe output, header included")
    func y4mMatchesFFmpeg() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter.mp4")
        let out = scratch.path("counter.y4m")
        let result = try CLI.run(["decode", path, "-o", out])
        #expect(result.status == 0, "\(result.stderrText)")
        let mine = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        let theirs = [UInt8](try Proc.ffmpeg(["-i", path, "-f", "yuv4mpegpipe", "-"]))
        let myHeader = String(decoding: mine.prefix { $0 != 0x0A }, as: UTF8.self)
        let theirHeader = String(decoding: theirs.prefix { $0 != 0x0A }, as: UTF8.self)
        #expect(myHeader == theirHeader)
        #expect(mine.count == theirs.count)
        #expect(mine.drop { $0 != 0x0A }.elementsEqual(theirs.drop { $0 != 0x0A }), "frame data")
    }

    @Test("-o X.yuv writes raw frames equal to ffmpeg -f rawvideo")
    func raw() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter.mp4")
        let out = scratch.path("counter.yuv")
        let result = try CLI.run(["decode", path, "-o", out])
        #expect(result.status == 0, "\(result.stderrText)")
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(data.count == 96 * Self.frameBytes)
        #expect(data == (try Proc.ffmpeg(["-i", path, "-f", "rawvideo", "-"])))
    }

    @Test("--pixel-format nv12 equals ffmpeg -pix_fmt nv12")
    func nv12() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter.mp4")
        let out = scratch.path("counter.nv12")
        let result = try CLI.run(["decode", path, "-o", out, "--pixel-format", "nv12"])
        #expect(result.status == 0, "\(result.stderrText)")
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(data.count == 96 * Self.frameBytes)
        #expect(data == (try Proc.ffmpeg(["-i", path, "-pix_fmt", "nv12", "-f", "rawvideo", "-"])))
    }

    @Test("-o - writes the raw frames to stdout")
    func stdout() throws {
        let path = try Fixtures.path("counter.mp4")
        let result = try CLI.run(["decode", path, "-o", "-"])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdout.count == 96 * Self.frameBytes)
        #expect(result.stdout == (try Proc.ffmpeg(["-i", path, "-f", "rawvideo", "-"])))
    }

    @Test("--frames stops early; hevc10.mkv stays 10-bit")
    func framesLimitAndDeepFormat() throws {
        let path = try Fixtures.path("hevc10.mkv")
        let result = try CLI.run(["decode", path, "-o", "-", "--frames", "4"])
        #expect(result.status == 0, "\(result.stderrText)")
        let expected = try Proc.ffmpeg(["-i", path, "-frames:v", "4", "-f", "rawvideo", "-"])
        #expect(result.stdout.count == 4 * 320 * 240 * 3)
        #expect(result.stdout == expected)
    }

    @Test("rotated.mp4 is decoded upright, as ffmpeg autorotates")
    func autorotate() throws {
        let path = try Fixtures.path("rotated.mp4")
        let result = try CLI.run(["decode", path, "-o", "-", "--frames", "3"])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdout == (try Proc.ffmpeg(["-i", path, "-frames:v", "3", "-f", "rawvideo", "-"])))
        let stored = try CLI.run(["decode", path, "-o", "-", "--frames", "3", "--no-autorotate"])
        #expect(stored.stdout == (try Proc.ffmpeg(["-noautorotate", "-i", path, "-frames:v", "3", "-f", "rawvideo", "-"])))
        #expect(stored.stdout != result.stdout)
    }

    @Test("an unknown --pixel-format fails with one line")
    func badPixelFormat() throws {
        let result = try CLI.run(["decode", try Fixtures.path("counter.mp4"), "-o", "-", "--pixel-format", "bogus"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1, "stderr: \(result.stderrText)")
        #expect(result.stderrText.contains("bogus"))
    }
}

@Suite("scanout render")
struct RenderCommandTests {
    @Test("--frames writes PNGs equal to ffmpeg's frames; --at picks the frame on screen")
    func framesAndTimes() throws {
        let scratch = try Scratch()
        let path = try Fixtures.path("counter.mp4")
        let dir = scratch.path("pngs")
        let result = try CLI.run(["render", path, "--frames", "17,3", "--at", "1.034", "--out", dir])
        #expect(result.status == 0, "\(result.stderrText)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(names == ["at-1.034s-frame-000031.png", "frame-000003.png", "frame-000017.png"])
        for (file, n) in [("frame-000003.png", 3), ("frame-000017.png", 17), ("at-1.034s-frame-000031.png", 31)] {
            let decoded = try Proc.ffmpeg(["-i", "\(dir)/\(file)", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            let reference = try Proc.ffmpeg(["-i", path, "-vf", "select=eq(n\\,\(n))", "-frames:v", "1",
                                             "-pix_fmt", "rgb24", "-f", "rawvideo", "-"])
            #expect(decoded.count == 320 * 240 * 3)
            #expect(decoded == reference, "\(file)")
        }
        #expect(result.stdoutText.split(separator: "\n").count == 3)
    }
}
