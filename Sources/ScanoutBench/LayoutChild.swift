import Foundation
import ScanoutCore
import ScanoutDecode
import ScanoutDemux
import ScanoutDisplay
import ScanoutPlayer
import ScanoutRender

/// What one Scanout layout trial did, written as JSON for the parent to read.
struct LayoutChildReport: Codable, Equatable {
    /// Each zone's frames presented and dropped (its player's counts), in zone order.
    var zonesPresented: [Int]
    var zonesDropped: [Int]
    /// Each zone's player's milliseconds per frame decoding and presenting (into its zone).
    var zonesDecodeMs: [Double]
    var zonesPresentMs: [Double]
    /// Canvases composed, and those whose compose started more than an interval late.
    var composed: Int
    var lateComposes: Int
    /// Milliseconds a compose took (every zone drawn into the canvas, by the CPU compositor):
    /// median, 99th percentile and the longest.
    var composeP50Ms: Double
    var composeP99Ms: Double
    var composeMaxMs: Double
    /// Seconds from the start to every zone's first frame shown (then the trial's seconds ran).
    var startSeconds: Double
    /// CPU seconds of the process's threads by name, read at the trial's end: the compositor
    /// (`scanout-screen`), the zones' players and the decoding threads they started.
    var threadCPUSeconds: [String: Double]

    /// No frame dropped in any zone, and no compose late.
    var passed: Bool { zonesDropped.allSatisfy { $0 == 0 } && lateComposes == 0 }
}

/// A Scanout layout trial, in a child process so that it is timed like the peers
/// (`bench layout --zones N --clip FILE --seconds S --child-report FILE`): a `ScreenLayout` grid
/// of N zones each playing the clip on repeat (fit), a `ScreenPlayer` composing them with the CPU
/// compositor (`HeadlessCanvasOutput`) every 1/30 s, for `seconds` after every zone has shown its
/// first frame.
public struct LayoutChild {
    let clip: String
    let zones: Int
    let seconds: Double

    public init(clip: String, zones: Int, seconds: Double) {
        self.clip = clip
        self.zones = zones
        self.seconds = seconds
    }

    /// The screen of the trial: the grid's cells as zones, in pixels, each playing `clip` again
    /// and again, fitted.
    static func layout(clip: String, grid: LayoutGrid) -> ScreenLayout {
        let zones = (0..<grid.zones).map { i in
            let c = grid.cell(i)
            return ScreenLayout.Zone(id: "z\(i)", x: .pixels(c.x), y: .pixels(c.y), width: .pixels(c.width), height: .pixels(c.height),
                                     scaling: .fit, playlist: [PlaylistItem(source: clip)], repeatMode: .all)
        }
        return ScreenLayout(width: grid.width, height: grid.height, zones: zones)
    }

    /// Plays the trial and writes the report (JSON) to `reportPath`.
    public func run(reportPath: String) throws {
        _ = try Demuxer(input: clip)  // a missing or unreadable clip fails here, with its name
        let grid = LayoutGrid(zones: zones)
        let output = TimedCanvasOutput(HeadlessCanvasOutput())
        var configuration = PlayerConfiguration()
        configuration.waitsOutSilence = false
        let t0 = monotonicSeconds()
        let screen = ScreenPlayer(layout: Self.layout(clip: clip, grid: grid), output: output, outputWidth: grid.width,
                                  outputHeight: grid.height, configuration: configuration,
                                  refreshInterval: .nanoseconds(Int64(LayoutPeers.intervalNanoseconds)))
        defer { screen.shutdown() }
        // Every zone's first frame shown, as GStreamer prerolls and ffmpeg opens its inputs.
        while screen.players.contains(where: { $0.snapshot.framesPresented == 0 }) {
            if let error = screen.error { throw error }
            if let failed = screen.players.first(where: { $0.snapshot.state == .error }) {
                throw BenchError("\(clip): a zone's player failed: \(failed.snapshot.lastFailure?.message ?? "no message")")
            }
            guard monotonicSeconds() - t0 < 60 else { throw BenchError("\(clip): \(zones) zones did not all show a frame within 60 s") }
            usleep(10_000)
        }
        let started = monotonicSeconds()
        while monotonicSeconds() < started + seconds {
            if let error = screen.error { throw error }
            usleep(UInt32(min(0.1, max(0, started + seconds - monotonicSeconds())) * 1e6))
        }
        let cpu = threadCPUSeconds()
        screen.shutdown()
        let snapshots = screen.players.map(\.snapshot)
        let times = output.milliseconds.sorted()
        // JSON has no NaN: no compose at all reads 0.
        let ms = { (p: Double) in times.isEmpty ? 0 : pct(times, p) }
        let report = LayoutChildReport(zonesPresented: snapshots.map(\.framesPresented), zonesDropped: snapshots.map(\.framesDropped),
                                       zonesDecodeMs: snapshots.map(\.decodeMsPerFrame), zonesPresentMs: snapshots.map(\.presentMsPerFrame),
                                       composed: screen.screen.composed, lateComposes: screen.lateComposes,
                                       composeP50Ms: ms(50), composeP99Ms: ms(99), composeMaxMs: ms(100),
                                       startSeconds: started - t0, threadCPUSeconds: cpu)
        let data = try JSONEncoder().encode(report)
        guard FileManager.default.createFile(atPath: reportPath, contents: data) else {
            throw MediaError.outputFailed(path: reportPath, reason: "cannot write the benchmark report")
        }
    }
}

/// A canvas output that times the one it wraps: the milliseconds of each present. Used on the
/// compositor's thread only; read once the screen has stopped.
final class TimedCanvasOutput: CanvasOutput {
    let inner: HeadlessCanvasOutput
    private(set) var milliseconds: [Double] = []

    init(_ inner: HeadlessCanvasOutput) {
        self.inner = inner
        milliseconds.reserveCapacity(4096)
    }

    var vblankSource: (any VBlankSource)? { inner.vblankSource }
    var acceptsGPUFrames: Bool { inner.acceptsGPUFrames }

    func present(_ canvas: Canvas, frames: [VideoFrame?]) throws {
        let t = monotonicSeconds()
        defer { milliseconds.append((monotonicSeconds() - t) * 1000) }
        try inner.present(canvas, frames: frames)
    }
}

/// CPU seconds (user + system) of this process's live threads, summed by thread name
/// (`/proc/self/task/*/stat`; a thread started by another takes its name unless it names itself).
func threadCPUSeconds() -> [String: Double] {
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    var byName: [String: Double] = [:]
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    for task in tasks {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
        let name = String(stat[stat.index(after: open)..<close])
        // After the name: state (field 3), … utime (14), stime (15).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        byName[name, default: 0] += (user + system) / ticks
    }
    return byName
}
