import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport

/// The frame number a fixture clip shows in its top band: bit b is the 32-pixel-wide block b from
/// the left, white = 1; read at the middle of each block, 16 rows down.
func frameCode(_ image: RGBImage) -> Int {
    var code = 0
    for bit in 0..<10 where bit * 32 + 16 < image.width {
        let p = image.pixel(x: bit * 32 + 16, y: 16)
        if (Int(p.r) + Int(p.g) + Int(p.b)) / 3 > 128 { code |= 1 << bit }
    }
    return code
}

/// Decodes frames 0...n of `path` in order and returns frame n (and the reader's stream facts).
func decodeFrame(_ n: Int, of path: String) throws -> (frame: VideoFrame, video: VideoStreamInfo) {
    let reader = try FrameReader(input: path)
    let frame = VideoFrame()
    for i in 0...n {
        guard try reader.next(into: frame) else { throw SupportError("\(path) ended before frame \(i)") }
    }
    return (frame, reader.video)
}

/// Where two byte arrays first differ, for readable failures.
func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String {
    if a.count != b.count { return "sizes differ: \(a.count) vs \(b.count)" }
    guard let i = a.indices.first(where: { a[$0] != b[$0] }) else { return "equal" }
    let maxDiff = a.indices.reduce(0) { max($0, abs(Int(a[$1]) - Int(b[$1]))) }
    let count = a.indices.reduce(0) { $0 + (a[$1] != b[$1] ? 1 : 0) }
    return "\(count) bytes differ, first at \(i) (\(a[i]) vs \(b[i])), max difference \(maxDiff)"
}

/// A 20-frame 321x241 4:4:4 H.264 clip with the frame counter, made in `scratch` (the fixture
/// script's odd.mkv is not odd-sized; see CPURendererTests). The format filter comes before the
/// drawing so that testsrc2 keeps the odd size.
func makeOddClip(in scratch: Scratch) throws -> String {
    let path = scratch.path("odd321x241.mkv")
    let band = "geq=lum='if(lt(Y,32),if(mod(floor(N/pow(2,floor(X/32))),2),235,16),lum(X,Y))':cb='if(lt(Y,32),128,cb(X,Y))':cr='if(lt(Y,32),128,cr(X,Y))'"
    _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=321x241:rate=30,format=yuv444p,\(band),trim=end_frame=20",
                         "-c:v", "libx264", "-threads", "1", "-preset", "veryfast", "-g", "10", "-pix_fmt", "yuv444p",
                         "-fflags", "+bitexact", "-flags:v", "+bitexact", "-y", path])
    return path
}
