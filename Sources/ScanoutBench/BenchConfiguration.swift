import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// A suite of `scanout bench`: what one measured run of a tool does.
public enum BenchSuite: String, Sendable {
    case decode, render, play, seek, startup

    /// What the figure is and which way is better.
    var metric: (name: String, unit: String, higherIsBetter: Bool) {
        switch self {
        case .decode, .render: return ("fps", "frames/s", true)
        case .play: return ("dropped", "frames", false)
        case .seek: return ("ms/seek", "ms", false)
        case .startup: return ("ms", "ms", false)
        }
    }
}

/// The renderer of the render suite.
public enum BenchRenderer: String, CaseIterable, Sendable {
    case cpu, gl
}

/// What a benchmark measures and how: the inputs, the runs, the peers, the report, and the
/// decoding settings every Scanout run takes (and passes on to its child processes).
public struct BenchConfiguration {
    /// Files to measure (each is a row group in the table and the plot).
    public var inputs: [String]
    /// Measured runs per tool and input.
    public var runs = 3
    /// Unmeasured warm-up runs per tool and input.
    public var warmup = 1
    /// Peers to run on the same inputs (`Peer.known`).
    public var peers: [String] = []
    /// Print the results as JSON instead of a table.
    public var json = false
    /// Where to write an SVG plot of the results, if anywhere.
    public var plot: String?
    /// Render suite: who draws.
    public var renderer = BenchRenderer.cpu
    /// Render suite with the GL renderer: frames whose readback is in flight at once.
    public var readbackDepth = 3
    /// Render suite: HDR frames tone mapped with this curve (ffmpeg's peer then runs the
    /// `zscale,tonemap,zscale` chain with the same curve); nil: drawn as they are.
    public var toneCurve: ToneCurve?
    /// Seek suite: exact seeks per run.
    public var seeks = 8
    /// Decode suite: concurrent decodes of each input.
    public var streams = 1

    /// Decoding threads (0: one per core), per stream.
    public var threads = 0
    public var playerType = PlayerType.auto
    /// Render node for VA-API or CUDA device number for NVDEC, if one was named.
    public var device: String?
    /// Consecutive hardware decode errors after which decoding switches to software.
    public var fallbackAfter = 3
    /// Seconds to wait for a source that does not answer.
    public var timeout = 10.0
    /// FFmpeg's warnings and the decoder decision printed (children too).
    public var verbose = false
    /// How inputs are opened and decoded in this process (made from the settings above).
    public var demuxer: DemuxerOptions
    public var decoder: DecoderOptions

    public init(inputs: [String], demuxer: DemuxerOptions = DemuxerOptions(), decoder: DecoderOptions = DecoderOptions()) {
        self.inputs = inputs
        self.demuxer = demuxer
        self.decoder = decoder
    }
}
