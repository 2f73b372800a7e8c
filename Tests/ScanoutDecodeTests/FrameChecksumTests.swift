import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutTestSupport
import Testing

@Suite("FrameChecksum")
struct FrameChecksumTests {
    @Test("md5 of every frame of counter.mp4 equals ffmpeg's framemd5, in order")
    func md5Parity() throws {
        let path = try Fixtures.path("counter.mp4")
        let expected = try Proc.ffmpegFrameMD5Lines(path)
        let reader = try FrameReader(input: path)
        var checksum = FrameChecksum(video: reader.video, formatStartTime: reader.demuxer.formatStartTime)
        #expect(checksum.timeBase == Rational(1, 30))
        let frame = VideoFrame()
        var lines: [String] = []
        while try reader.next(into: frame) {
            lines.append(try checksum.line(for: frame, fallbackTimestamp: Int64(lines.count)))
        }
        #expect(lines.count == expected.count)
        for (i, (mine, theirs)) in zip(lines, expected).enumerated() {
            #expect(mine.trimmingCharacters(in: .newlines) == theirs, "frame \(i)")
        }
    }
}
