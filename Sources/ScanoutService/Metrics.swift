import Foundation
import Prometheus
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import Synchronization

/// Prometheus metrics of the player, made in a registry of the service's own (no process-wide
/// bootstrap, so that several services can live in one test process) with swift-prometheus's
/// own API, so that every family has its `# HELP` line and its unit in its name (`_seconds`,
/// `_bytes`, `_total`).
///
/// Counters and histograms are updated on the player's loop thread (`PlaybackObserver`) and from
/// events; swift-prometheus's metrics are thread-safe. Process metrics (`process_*`, the names
/// the Prometheus client libraries use) are read from /proc when `/metrics` is rendered.
public final class PlayerMetrics: PlaybackObserver, Sendable {
    public let registry = PrometheusCollectorRegistry()
    let framesDecoded: Counter
    let framesPresented: Counter
    let framesDropped: Counter
    let bytesRead: Counter
    let fallbacks: Counter
    let itemsFailed: Counter
    let decodeTime: DurationHistogram
    let renderTime: DurationHistogram
    let serviceUp: Gauge
    let playing: Gauge
    let displayOn: Gauge
    let variantSwitches: Counter
    let segmentsAbandoned: Counter
    let variantBitrate: Gauge
    let firstFrameTime: DurationHistogram
    let channelChanges: Counter
    let bufferingWaits: Counter
    let bufferSeconds: Gauge
    let bufferBytes: Gauge
    let process: ProcessMetrics

    public init() {
        func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "scanout", metricName: metric, unitName: unit, helpText: help)
        }
        let buckets: [Duration] = [.microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                                   .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1)]
        let r = registry
        framesDecoded = r.makeCounter(descriptor: name("frames_decoded", "total", "Frames decoded (count)."))
        framesPresented = r.makeCounter(descriptor: name("frames_presented", "total", "Frames shown on the output (count)."))
        framesDropped = r.makeCounter(descriptor: name("frames_dropped", "total", "Frames dropped for being late (count)."))
        bytesRead = r.makeCounter(descriptor: name("bytes_read", "total", "Compressed bytes read from sources (bytes)."))
        fallbacks = r.makeCounter(descriptor: name("decoder_fallbacks", "total", "Switches from a hardware decoder to software mid-stream (count)."))
        itemsFailed = r.makeCounter(descriptor: name("items_failed", "total", "Playlist items that could not be opened or decoded (count)."))
        decodeTime = r.makeDurationHistogram(descriptor: name("decode", "seconds", "Time to decode one frame (seconds)."), buckets: buckets)
        renderTime = r.makeDurationHistogram(descriptor: name("render", "seconds", "Time to draw and present one frame (seconds)."), buckets: buckets)
        serviceUp = r.makeGauge(descriptor: MetricNameDescriptor(namespace: "scanout", metricName: "service_up", unitName: "",
                                                                 helpText: "1 while the service shows what it should, 0 while it is down (boolean)."))
        playing = r.makeGauge(descriptor: MetricNameDescriptor(namespace: "scanout", metricName: "playing", unitName: "",
                                                               helpText: "1 while playing or buffering, else 0 (boolean)."))
        displayOn = r.makeGauge(descriptor: MetricNameDescriptor(namespace: "scanout", metricName: "display_on", unitName: "",
                                                                 helpText: "1 while the screens are on, 0 while switched off (boolean)."))
        r.makeGauge(descriptor: MetricNameDescriptor(namespace: "scanout", metricName: "build_info", unitName: "",
                                                     helpText: "The running build: its version and the libavcodec it links (always 1)."),
                    labels: [("version", ScanoutVersion.string), ("libavcodec", libavcodecVersion)]).set(to: 1)
        variantSwitches = r.makeCounter(descriptor: name("hls_variant_switches", "total", "Changes of variant of adaptive HLS streams (count)."))
        segmentsAbandoned = r.makeCounter(descriptor: name("hls_segments_abandoned", "total",
                                                           "HLS segments abandoned mid-download for the same time range of a lower variant (count)."))
        variantBitrate = r.makeGauge(descriptor: name("hls_variant_bitrate", "bytes_per_second",
                                                      "Advertised bitrate of the HLS variant played (its BANDWIDTH / 8), 0 when none (bytes per second)."))
        let tuneBuckets: [Duration] = [.milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(300), .milliseconds(500),
                                       .milliseconds(750), .seconds(1), .milliseconds(1500), .seconds(2), .seconds(3), .seconds(5), .seconds(10)]
        firstFrameTime = r.makeDurationHistogram(descriptor: name("first_frame", "seconds",
                                                                  "Time from a command that makes an item current (load, channel change, next, jump, retry) to its first frame on screen (seconds)."),
                                                 buckets: tuneBuckets)
        channelChanges = r.makeCounter(descriptor: name("channel_changes", "total", "Channels tuned through the channel list (count)."))
        bufferingWaits = r.makeCounter(descriptor: name("buffering_waits", "total",
                                                         "Times playback waited for its source: a read-ahead run dry, a stalled read, a silent live input (count)."))
        bufferSeconds = r.makeGauge(descriptor: name("buffer_level", "seconds", "Media time the current network source's read-ahead holds (seconds)."))
        bufferBytes = r.makeGauge(descriptor: name("buffer_level", "bytes", "Compressed bytes the current network source's read-ahead holds (bytes)."))
        process = ProcessMetrics(registry: r)
        serviceUp.set(to: 0)
        playing.set(to: 0)
        displayOn.set(to: 1)
    }

    public func frameDecoded(seconds: Double, bytes: Int) {
        framesDecoded.increment()
        bytesRead.increment(by: Int64(bytes))
        decodeTime.recordNanoseconds(Int64(seconds * 1e9))
    }

    public func framePresented(seconds: Double) {
        framesPresented.increment()
        renderTime.recordNanoseconds(Int64(seconds * 1e9))
    }

    public func frameDropped() {
        framesDropped.increment()
    }

    /// A frame of `output` drawn censored by the content policy (`scanout_frames_censored_total`,
    /// by output; the registry hands back the same counter for the same name and labels).
    public func frameCensored(output: String) {
        registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "scanout", metricName: "frames_censored", unitName: "total",
                                                              helpText: "Output frames drawn censored by the content policy, by output (count)."),
                             labels: [("output", output)]).increment()
    }

    /// New transport-stream faults of the live input `source` (`scanout_ts_cc_errors_total`,
    /// `scanout_ts_discontinuities_total`, `scanout_rtp_packets_lost_total`, by source).
    private func countTransport(source: String, cc: Int, discontinuities: Int, lost: Int) {
        for (metric, help, n) in [("ts_cc_errors", "MPEG-TS continuity-counter errors of live inputs, by source (count).", cc),
                                  ("ts_discontinuities", "MPEG-TS discontinuity indicators of live inputs, by source (count).", discontinuities),
                                  ("rtp_packets_lost", "RTP packets missing from the sequence of live inputs, by source (count).", lost)] {
            let c = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "scanout", metricName: metric, unitName: "total", helpText: help),
                                         labels: [("source", URLRedaction.redact(source))])
            if n > 0 { c.increment(by: Int64(n)) }
        }
    }

    /// Follows the events that metrics count.
    public func observe(_ event: PlayerEvent) {
        switch event {
        case .decoderFallback: fallbacks.increment()
        case .error(_, .some, _): itemsFailed.increment()
        case .serviceState(let up, _): serviceUp.set(to: up ? 1 : 0)
        case .displayPower(let on): displayOn.set(to: on ? 1 : 0)
        case .stateChanged(_, let to): playing.set(to: to == .playing || to == .buffering ? 1 : 0)
        case .discontinuity(let source, _, let cc, let disc, let lost, _): countTransport(source: source, cc: cc, discontinuities: disc, lost: lost)
        case .variantSwitch(_, let from, let to, _, let reason, _, _):
            if from != nil { variantSwitches.increment() }
            if from != nil, reason.hasPrefix(VariantSwitch.abandonedPrefix) { segmentsAbandoned.increment() }
            variantBitrate.set(to: Double(to.bitrate) / 8)
        case .itemChanged: variantBitrate.set(to: 0)
        case .firstFrame(_, _, .some(let seconds), _): firstFrameTime.recordNanoseconds(Int64(seconds * 1e9))
        case .channelChanged: channelChanges.increment()
        case .buffering(true, _): bufferingWaits.increment()
        default: break
        }
    }

    /// The exposition text, with the process metrics and the read-ahead's level read now.
    public func render(_ snapshot: PlayerSnapshot? = nil) -> String {
        process.update()
        let level = snapshot?.buffer?.level
        bufferSeconds.set(to: level?.seconds ?? 0)
        bufferBytes.set(to: Double(level?.bytes ?? 0))
        return registry.emitToString()
    }
}

/// The process metrics Prometheus client libraries export, from /proc/self: resident and virtual
/// memory, open and maximum file descriptors, CPU time, start time.
final class ProcessMetrics: Sendable {
    let residentMemory: Gauge
    let virtualMemory: Gauge
    let openFDs: Gauge
    let maxFDs: Gauge
    let cpuSeconds: Counter
    let startTime: Gauge
    /// CPU seconds already added to the counter.
    private let cpuCounted = Mutex(0.0)

    init(registry r: PrometheusCollectorRegistry) {
        func gauge(_ metric: String, _ unit: String, _ help: String) -> Gauge {
            r.makeGauge(descriptor: MetricNameDescriptor(namespace: "process", metricName: metric, unitName: unit, helpText: help))
        }
        residentMemory = gauge("resident_memory", "bytes", "Resident set size of the scanout process (bytes).")
        virtualMemory = gauge("virtual_memory", "bytes", "Virtual memory size of the scanout process (bytes).")
        openFDs = gauge("open", "fds", "Open file descriptors (count).")
        maxFDs = gauge("max", "fds", "The limit on open file descriptors (count).")
        startTime = gauge("start_time", "seconds", "Start time of the process since the Unix epoch (seconds).")
        cpuSeconds = r.makeCounter(descriptor: MetricNameDescriptor(namespace: "process", metricName: "cpu_seconds", unitName: "total",
                                                                     helpText: "User and system CPU time of every thread (seconds)."))
    }

    /// Reads /proc/self/stat (fields after the command name: state is field 3), /proc/self/fd and
    /// the descriptor limit.
    func update() {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
           let close = stat.lastIndex(of: ")") {
            // Fields 3... after "pid (comm)"; comm may hold spaces and parentheses.
            let f = stat[stat.index(after: close)...].split(separator: " ").map(String.init)
            func field(_ n: Int) -> Double { f.count > n - 3 ? Double(f[n - 3]) ?? 0 : 0 }
            let cpu = (field(14) + field(15)) / ticks
            let delta = cpuCounted.withLock { counted in
                defer { counted = max(counted, cpu) }
                return cpu - counted
            }
            if delta > 0 { cpuSeconds.increment(by: delta) }
            virtualMemory.set(field(23))
            residentMemory.set(field(24) * page)
            if let boot = Self.bootTime() { startTime.set(boot + field(22) / ticks) }
        }
        if let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            openFDs.set(Double(fds.count))
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { maxFDs.set(Double(limit.rlim_cur)) }
    }

    /// Seconds since the epoch at boot (`btime` in /proc/stat).
    private static func bootTime() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
