import CoreMetrics
import Metrics
import Prometheus
import ScanoutPlayer

/// Prometheus metrics of the player, through swift-metrics with a registry of the service's own
/// (no process-wide bootstrap, so that several services can live in one test process).
///
/// Counters and histograms are updated on the player's loop thread (`PlaybackObserver`) and from
/// events; swift-metrics handlers are thread-safe.
public final class PlayerMetrics: PlaybackObserver, Sendable {
    public let registry = PrometheusCollectorRegistry()
    let framesDecoded: CoreMetrics.Counter
    let framesPresented: CoreMetrics.Counter
    let framesDropped: CoreMetrics.Counter
    let bytesRead: CoreMetrics.Counter
    let fallbacks: CoreMetrics.Counter
    let itemsFailed: CoreMetrics.Counter
    let decodeTime: CoreMetrics.Timer
    let renderTime: CoreMetrics.Timer
    let serviceUp: CoreMetrics.Gauge
    let playing: CoreMetrics.Gauge
    let factory: PrometheusMetricsFactory

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        let buckets: [Duration] = [.microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                                   .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1)]
        factory.defaultDurationHistogramBuckets = buckets
        framesDecoded = CoreMetrics.Counter(label: "scanout_frames_decoded_total", factory: factory)
        framesPresented = CoreMetrics.Counter(label: "scanout_frames_presented_total", factory: factory)
        framesDropped = CoreMetrics.Counter(label: "scanout_frames_dropped_total", factory: factory)
        bytesRead = CoreMetrics.Counter(label: "scanout_bytes_read_total", factory: factory)
        fallbacks = CoreMetrics.Counter(label: "scanout_decoder_fallbacks_total", factory: factory)
        itemsFailed = CoreMetrics.Counter(label: "scanout_items_failed_total", factory: factory)
        decodeTime = CoreMetrics.Timer(label: "scanout_decode_seconds", factory: factory)
        renderTime = CoreMetrics.Timer(label: "scanout_render_seconds", factory: factory)
        serviceUp = CoreMetrics.Gauge(label: "scanout_service_up", factory: factory)
        playing = CoreMetrics.Gauge(label: "scanout_playing", factory: factory)
        self.factory = factory
        serviceUp.record(0)
        playing.record(0)
    }

    public func frameDecoded(seconds: Double, bytes: Int) {
        framesDecoded.increment()
        bytesRead.increment(by: bytes)
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
    /// by output; the registry hands back the same counter for the same output).
    public func frameCensored(output: String) {
        CoreMetrics.Counter(label: "scanout_frames_censored_total", dimensions: [("output", output)], factory: factory).increment()
    }

    /// Follows the events that metrics count.
    public func observe(_ event: PlayerEvent) {
        switch event {
        case .decoderFallback: fallbacks.increment()
        case .error(_, .some, _): itemsFailed.increment()
        case .serviceState(let up, _): serviceUp.record(up ? 1 : 0)
        case .stateChanged(_, let to): playing.record(to == .playing || to == .buffering ? 1 : 0)
        default: break
        }
    }

    /// The exposition text.
    public func render() -> String { registry.emitToString() }
}
