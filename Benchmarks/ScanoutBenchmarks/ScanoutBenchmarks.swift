// Hot paths of Scanout, per frame, with package-benchmark: wall time and allocations.
//   tools/make-clips.sh .clips h264-1080p30.mp4
//   SCANOUT_BENCHMARKS=1 swift package benchmark [thresholds check]
// Steady state: each benchmark opens its input once, then measures one frame per iteration.
// Names are plain (letters, digits, dashes): they name the checked-in files in Benchmarks/Thresholds.
// Allocation counts include FFmpeg's own mallocs (av_read_frame allocates each packet's data).
import Benchmark
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// The benchmark clip (1080p H.264), found from the package root.
let clip: String = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let path = root.appendingPathComponent(".clips/h264-1080p30.mp4").path
    guard FileManager.default.fileExists(atPath: path) else {
        fatalError("\(path) is missing: run tools/make-clips.sh .clips h264-1080p30.mp4")
    }
    return path
}()

/// Decodes frames forever: reopens the clip when it ends (the reopen is rare and included).
final class FrameSource {
    private var reader: FrameReader
    let frame = VideoFrame()
    init() throws { reader = try FrameReader(input: clip, decoderOptions: DecoderOptions(threads: 1)) }
    func next() throws -> VideoFrame {
        if try !reader.next(into: frame) {
            reader = try FrameReader(input: clip, decoderOptions: DecoderOptions(threads: 1))
            _ = try reader.next(into: frame)
        }
        return frame
    }
}

/// One configuration for every benchmark here (a function: the type is not Sendable).
func perFrame() -> Benchmark.Configuration {
    Benchmark.Configuration(
    metrics: [.wallClock, .throughput, .mallocCountTotal],
    warmupIterations: 10,
    scalingFactor: .one,
    maxDuration: .seconds(3),
    maxIterations: 300
    )
}

let benchmarks: @Sendable () -> Void = {
    // What the harness itself allocates per sample: subtract it from the counts below.
    Benchmark("harness-empty-sample", configuration: perFrame()) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(0) }
    }

    // Inputs stay open from one sample to the next, so that each sample is one packet or frame
    // of the steady state (the harness runs one benchmark at a time, on one thread).
    let demux = SteadyState { (try Demuxer(input: clip), Packet()) }
    Benchmark("demux-1080p-h264-packet", configuration: perFrame()) { benchmark in
        for _ in benchmark.scaledIterations {
            var (demuxer, packet) = try demux.value()
            if try !demuxer.read(into: packet) {
                demuxer = try Demuxer(input: clip)
                demux.replace((demuxer, packet))
                _ = try demuxer.read(into: packet)
            }
            blackHole(packet.size)
        }
    }

    let decode = SteadyState { try FrameSource() }
    Benchmark("decode-1080p-h264-frame-1thread", configuration: perFrame()) { benchmark in
        let source = try decode.value()
        for _ in benchmark.scaledIterations {
            blackHole(try source.next().pts)
        }
    }

    Benchmark("cpu-convert-1080p-yuv420p-rgb24", configuration: perFrame()) { benchmark in
        let frame = try FrameSource().next().clone()
        let renderer = CPURenderer()
        var image = RGBImage(width: 0, height: 0, bytes: [])
        try renderer.render(frame, into: &image)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try renderer.render(frame, into: &image)
            blackHole(image.bytes.count)
        }
    }

    // GLES on whatever EGL offers (llvmpipe here): upload, draw, readback of one 1080p frame.
    Benchmark("gl-convert-1080p-yuv420p-rgb24", configuration: perFrame()) { benchmark in
        let frame = try FrameSource().next().clone()
        let gl = try GLRenderer()
        _ = try gl.render(frame)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try gl.render(frame).bytes.count)
        }
    }

    Benchmark("framemd5-1080p-frame", configuration: perFrame()) { benchmark in
        let frame = try FrameSource().next().clone()
        var checksum = FrameChecksum(video: try Demuxer(input: clip).video, formatStartTime: 0)
        _ = try checksum.md5(of: frame)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try checksum.md5(of: frame).size)
        }
    }
}

/// A value made on first use and kept across samples.
/// `@unchecked Sendable`: package-benchmark runs one benchmark at a time on one thread, so the value
/// is never touched concurrently.
final class SteadyState<Value>: @unchecked Sendable {
    private let make: () throws -> Value
    private var stored: Value?
    init(_ make: @escaping () throws -> Value) { self.make = make }
    func value() throws -> Value {
        if let stored { return stored }
        let v = try make()
        stored = v
        return v
    }
    func replace(_ v: Value) { stored = v }
}
