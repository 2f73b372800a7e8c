import Dispatch
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import Synchronization

/// `bench decode --streams N`: N decodes of one input at once, as Scanout threads in one process
/// and as N processes of each peer, and the figures both give.
///
/// Aggregate fps is all frames over the wall time from the start to the last stream's end: for
/// Scanout from the gate its threads start at (after every stream has opened its input), for a
/// peer from the launch of its processes to the last exit (their start-up is inside).
struct StreamFigures {
    /// 1 for Scanout (one process, a thread per stream); N for a peer.
    var processes: Int
    /// Each stream's frames and seconds from the start to its end, in the last measured run.
    var frames: [Int] = []
    var seconds: [Double] = []
    /// From the start to the last stream's end, in the last measured run.
    var wallSeconds = 0.0
    /// The aggregate of every measured run.
    var aggregateRuns: [Double] = []

    var aggregateFPS: Double { Double(frames.reduce(0, +)) / max(wallSeconds, 1e-9) }
    var perStreamFPS: [Double] { zip(frames, seconds).map { Double($0) / max($1, 1e-9) } }
    var aggregateMedian: Double { upperMedian(aggregateRuns) }

    /// Records one measured run.
    mutating func record(frames: [Int], seconds: [Double], wall: Double) {
        self.frames = frames
        self.seconds = seconds
        wallSeconds = wall
        aggregateRuns.append(aggregateFPS)
    }
}

/// One stream of a Scanout child's run.
struct StreamRun: Sendable {
    var frames: Int
    /// Monotonic time of the stream's last frame.
    var end: Double
    var frameMs: [Double]
    /// "sw: libavcodec h264 (software)", with the fallback when one happened.
    var summary: String
    /// The decision's decoder label ("VA-API /dev/dri/renderD128 (...)"), which picks the peer's decoder.
    var label: String
}

extension BenchChild {
    /// `configuration.streams` decodes of `input` at once, each on a thread of its own with its own
    /// reader (demuxer and the decoder `DecoderSelector` picks with the command's options, as a
    /// single decode does). Every stream opens its input, then all start together at a gate and
    /// decode the whole file; the report has each stream's frames and its time from the gate.
    func decodeStreams(input: String) throws -> ChildReport {
        let t0 = monotonicSeconds()
        let count = configuration.streams
        let demuxerOptions = configuration.demuxer
        // Decoding only: hardware frames stay where the decoder put them, as the ffmpeg peer's
        // do (`-hwaccel_output_format`); software frames are in CPU memory anyway.
        let transfers = FrameTransfers()
        var decoding = configuration.decoder
        decoding.destination = .gpu
        decoding.transfers = transfers
        let decoderOptions = decoding
        let slots = ThreadSlots<Result<StreamRun, any Error>>(count: count)
        let opened = DispatchGroup(), gate = DispatchGroup(), done = DispatchGroup()
        gate.enter()
        for i in 0..<count {
            opened.enter()
            done.enter()
            let thread = Thread(named: "scanout-bench-stream-\(i)") {
                var reader: FrameReader?
                var openError: (any Error)?
                do {
                    reader = try FrameReader(input: input, demuxerOptions: demuxerOptions, decoderOptions: decoderOptions)
                } catch {
                    openError = error
                }
                opened.leave()
                gate.wait()
                slots.store(i, Result {
                    if let openError { throw openError }
                    return try Self.decodeAll(reader!)
                })
                done.leave()
            }
            thread.start()
        }
        opened.wait()
        let start = monotonicSeconds()
        gate.leave()
        done.wait()
        let runs = try slots.all().map { try $0.get() }
        let last = runs.map(\.end).max() ?? start
        var summaries: [String] = []
        for s in runs.map(\.summary) where !summaries.contains(s) { summaries.append(s) }
        var report = ChildReport(frames: runs.map(\.frames).reduce(0, +), internalSeconds: last - t0, unitMs: runs.flatMap(\.frameMs))
        report.decoder = summaries.joined(separator: " | ")
        report.copies = transfers.counts.summary(frames: report.frames)
        report.decoderLabel = runs[0].label
        report.streamFrames = runs.map(\.frames)
        report.streamSeconds = runs.map { $0.end - start }
        report.streamsWallSeconds = last - start
        return report
    }

    /// Decodes every frame of `r`, timing each.
    private static func decodeAll(_ r: FrameReader) throws -> StreamRun {
        let frame = VideoFrame()
        var times: [Double] = []
        times.reserveCapacity(4096)
        var last = monotonicSeconds()
        while try r.next(into: frame) {
            let now = monotonicSeconds()
            times.append((now - last) * 1000)
            last = now
        }
        if times.isEmpty { throw MediaError.noFrames(input: r.input) }
        return StreamRun(frames: times.count, end: last, frameMs: times, summary: decoderSummary(r),
                         label: r.decision?.decoder ?? r.decoder.kind)
    }
}

/// What each of several threads produced, stored once by its thread and read after all finished.
private final class ThreadSlots<Value: Sendable>: Sendable {
    private let slots: Mutex<[Value?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    func store(_ i: Int, _ value: Value) { slots.withLock { $0[i] = value } }

    /// Every slot; each was stored (the threads have finished).
    func all() -> [Value] { slots.withLock { $0 }.map { $0! } }
}

/// `count` copies of `argv` started at once, a thread each waiting on its child; the wall time
/// from the launch to the last exit and each child's result (nil: it could not be started).
func runConcurrently(_ argv: [String], count: Int) -> (wallSeconds: Double, children: [ChildResult?]) {
    if count == 1 {
        let start = monotonicSeconds()
        let child = runChild(argv)
        return (monotonicSeconds() - start, [child])
    }
    let start = monotonicSeconds()
    let done = DispatchGroup()
    let slots = ThreadSlots<ChildResult?>(count: count)
    for i in 0..<count {
        done.enter()
        let thread = Thread(named: "scanout-bench-peer-\(i)") {
            slots.store(i, runChild(argv))
            done.leave()
        }
        thread.start()
    }
    done.wait()
    return (monotonicSeconds() - start, slots.all())
}
