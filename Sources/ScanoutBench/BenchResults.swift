import ScanoutDemux

/// One tool's figures on one input.
struct ToolFigures {
    var tool: String
    var values: [Double] = []
    var cpuMsPerUnit: [Double] = []
    var peakKiB = 0
    var internalFPS: [Double] = []

    var median: Double { upperMedian(values) }
    var cpuMedian: Double { upperMedian(cpuMsPerUnit) }
}

/// Everything measured on one input.
struct InputResult {
    var input: String
    var video: VideoStreamInfo
    var frames = 0
    var tools: [ToolFigures] = []
    var missing: [String] = []
    var noEquivalent: [String] = []
    /// Scanout's per-unit times (frame times, seek times or pacing deviations) from its last run, ms.
    var unitMs: [Double] = []
    var dropped: [Int] = []
    /// Play suite: each peer's dropped and delayed frames per run.
    var peerDrops: [String: [(dropped: Int, delayed: Int)]] = [:]
    var pacing: (p50: Double, p99: Double) = (0, 0)
    /// GL renderer: median ms per frame of upload, draw and readback, from the last run.
    var stageMs: [String: Double] = [:]
    /// GL renderer: how its frames were read back (`ChildReport.readback`).
    var readback = ""
    /// Scanout's copies of decoded pictures between CPU and GPU memory, from the last run.
    var copies = ""
    /// Startup and seek suites: Scanout's stages in its last run.
    var stages: [Stage] = []
    /// What decoded in Scanout's last run (the decision's player type and decoder).
    var decoder = ""
    /// Decode suite: how the ffmpeg peer decoded (its decoder arguments, and why when they differ
    /// in kind from Scanout's decoder).
    var peerDecoding = ""
    /// Decode suite: the streams decoded at once, per tool (Scanout's threads, a peer's processes).
    var streams: [String: StreamFigures] = [:]

    /// Scanout's median over `peer`'s (the first tool is Scanout); nil when the peer has no
    /// figure above 0.
    func ratio(to peer: String) -> Double? {
        guard let ours = tools.first, let theirs = tools.first(where: { $0.tool == peer }), theirs.median > 0 else { return nil }
        return ours.median / theirs.median
    }
}
