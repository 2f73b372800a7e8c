import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// The framemd5 data lines of every frame `reader` gives (hash and timestamp per frame), as
/// `scanout framemd5` writes them; frames held only in GPU memory are downloaded first.
public func frameLines(_ reader: FrameReader) throws -> [String] {
    var sums = FrameChecksum(video: reader.video, formatStartTime: reader.demuxer.formatStartTime)
    let frame = VideoFrame()
    var lines: [String] = []
    var n: Int64 = 0
    while try reader.next(into: frame) {
        try frame.makeCPUResident()
        lines.append(try sums.line(for: frame, fallbackTimestamp: n))
        n += 1
    }
    return lines
}
