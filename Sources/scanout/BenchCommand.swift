import ArgumentParser
import ScanoutMedia

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure Scanout, and compare it with other tools on the same input in the same run.",
        subcommands: [BenchDecode.self]
    )
}

/// One tool's figures over the measured runs.
struct BenchFigures {
    var tool: String
    var frames: Int
    var fps: [Double]
    var cpuPerFrameMs: [Double]
    var peakKiB: Int

    var median: Double { fps.sorted()[fps.count / 2] }
    var cpuMedian: Double { cpuPerFrameMs.sorted()[cpuPerFrameMs.count / 2] }
}

struct BenchDecode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode speed: frames, decode fps, CPU time per frame, peak memory.",
        discussion: """
        Times demux + decode of every frame (the input is opened and probed before the clock starts, \
        as ffmpeg's -benchmark rtime does). With --compare ffmpeg, runs \
        `ffmpeg -benchmark -threads N -i INPUT -f null -` interleaved with Scanout's runs and reports \
        the ratio of median fps.
        """
    )

    @Argument(help: "File path or URL.") var input: String
    @Option(help: "Measured runs per tool.") var runs: Int = 3
    @Option(help: "Unmeasured warm-up runs per tool.") var warmup: Int = 1
    @Option(help: "Peers to run on the same input, comma-separated: ffmpeg.") var compare: String?
    @Flag(help: "Print the results as JSON.") var json = false
    @OptionGroup var options: InputOptions

    func validate() throws {
        guard runs >= 1 && runs <= 100 else { throw ValidationError("--runs must be 1...100") }
        guard warmup >= 0 else { throw ValidationError("--warmup must be 0 or more") }
        let peers = compareList
        for p in peers where p != "ffmpeg" { throw ValidationError("--compare: unknown peer '\(p)' (known: ffmpeg)") }
    }

    var compareList: [String] { compare.map { $0.split(separator: ",").map { String($0).trimmingSpaces } } ?? [] }

    func run() throws {
        options.installLog()
        try runReporting {
            let probe = try Demuxer(input: input, options: options.demuxer)
            let v = probe.video
            var ours = BenchFigures(tool: "scanout", frames: 0, fps: [], cpuPerFrameMs: [], peakKiB: 0)
            var peers: [String: BenchFigures] = [:]
            var missing: [String] = []
            let peerList = compareList
            let total = warmup + runs
            for i in 0..<total {
                let measured = i >= warmup
                let r = try decodeOnce()
                if measured {
                    ours.frames = r.frames
                    ours.fps.append(Double(r.frames) / r.seconds)
                    ours.cpuPerFrameMs.append(r.cpu * 1000 / Double(max(r.frames, 1)))
                }
                for peer in peerList where !missing.contains(peer) {
                    guard let p = runFFmpeg() else {
                        missing.append(peer)
                        continue
                    }
                    if measured {
                        var f = peers[peer] ?? BenchFigures(tool: peer, frames: p.frames, fps: [], cpuPerFrameMs: [], peakKiB: 0)
                        f.fps.append(Double(p.frames) / p.seconds)
                        f.cpuPerFrameMs.append(p.cpu * 1000 / Double(max(p.frames, 1)))
                        f.peakKiB = max(f.peakKiB, p.peakKiB)
                        peers[peer] = f
                    }
                }
                if !json { StandardError.write("run \(i + 1)/\(total)\(measured ? "" : " (warm-up)") done\n") }
            }
            ours.peakKiB = selfUsage().maxRSSKiB
            let rows = [ours] + peerList.compactMap { peers[$0] }
            if json {
                print(jsonReport(video: v, rows: rows, missing: missing))
            } else {
                print("bench decode \(input): \(v.codecName) \(v.width)x\(v.height) \(v.pixelFormat), threads \(options.threads == 0 ? "auto" : String(options.threads)), \(runs) runs after \(warmup) warm-up")
                print(pad("tool", 10) + pad("frames", 8) + pad("fps median", 12) + pad("min", 9) + pad("max", 9) + pad("cpu ms/frame", 14) + "peak MiB")
                for r in rows {
                    print(pad(r.tool, 10) + pad(String(r.frames), 8) + pad(format1(r.median), 12) + pad(format1(r.fps.min()!), 9)
                          + pad(format1(r.fps.max()!), 9) + pad(format2(r.cpuMedian), 14) + format1(Double(r.peakKiB) / 1024))
                }
                for p in peerList {
                    if let f = peers[p] {
                        print("ratio scanout/\(p): \(formatFixed(ours.median / f.median, 3)) (median fps)\(f.frames != ours.frames ? "  WARNING: frame counts differ (\(ours.frames) vs \(f.frames))" : "")")
                    }
                }
                for m in missing { print("\(m): missing (not installed or failed to run)") }
            }
        }
    }

    private func decodeOnce() throws -> (frames: Int, seconds: Double, cpu: Double) {
        let demuxer = try Demuxer(input: input, options: options.demuxer)
        let c0 = selfUsage().cpu
        let t0 = monotonicSeconds()
        let decoder = try SoftwareDecoder(for: demuxer, options: options.decoder)
        let reader = FrameReader(demuxer: demuxer, decoder: decoder)
        let frame = VideoFrame()
        var n = 0
        while try reader.next(into: frame) { n += 1 }
        let t1 = monotonicSeconds()
        let c1 = selfUsage().cpu
        if n == 0 { throw MediaError.noFrames(input: input) }
        return (n, t1 - t0, c1 - c0)
    }

    /// `ffmpeg -benchmark`: frames from its last progress line, time from its `rtime`.
    private func runFFmpeg() -> (frames: Int, seconds: Double, cpu: Double, peakKiB: Int)? {
        guard let r = runChild(["ffmpeg", "-hide_banner", "-nostdin", "-benchmark", "-threads", String(options.threads),
                                "-i", input, "-map", "0:v:0", "-f", "null", "-"]), r.status == 0 else { return nil }
        guard let rtime = lastNumber(after: "rtime=", in: r.stderr),
              let frames = lastNumber(after: "frame=", in: r.stderr) else { return nil }
        let utime = lastNumber(after: "utime=", in: r.stderr) ?? r.cpuSeconds
        let stime = lastNumber(after: "stime=", in: r.stderr) ?? 0
        return (Int(frames), rtime, utime + stime, r.maxRSSKiB)
    }

    private func jsonReport(video v: VideoStreamInfo, rows: [BenchFigures], missing: [String]) -> String {
        func arr(_ a: [Double]) -> String { "[" + a.map { formatFixed($0, 3) }.joined(separator: ",") + "]" }
        let items = rows.map { r in
            "{\"tool\":\"\(r.tool)\",\"frames\":\(r.frames),\"fps\":\(arr(r.fps)),\"fpsMedian\":\(formatFixed(r.median, 3)),\"cpuMsPerFrame\":\(arr(r.cpuPerFrameMs)),\"peakKiB\":\(r.peakKiB)}"
        }
        let ratios = rows.dropFirst().map { "\"\($0.tool)\":\(formatFixed(rows[0].median / $0.median, 4))" }
        return "{\"suite\":\"decode\",\"input\":\(jsonString(input)),\"codec\":\"\(v.codecName)\",\"width\":\(v.width),\"height\":\(v.height),\"threads\":\(options.threads),\"runs\":\(runs),\"results\":[\(items.joined(separator: ","))],\"ratios\":{\(ratios.joined(separator: ","))},\"missing\":[\(missing.map(jsonString).joined(separator: ","))]}"
    }
}

/// The number after the last occurrence of `key` ("rtime=1.234s" → 1.234).
func lastNumber(after key: String, in text: String) -> Double? {
    let t = Array(text.utf8), k = Array(key.utf8)
    guard t.count >= k.count else { return nil }
    guard let start = stride(from: t.count - k.count, through: 0, by: -1).first(where: { t[$0..<$0 + k.count].elementsEqual(k) }) else { return nil }
    let rest = String(decoding: t[(start + k.count)...], as: UTF8.self).drop(while: { $0 == " " })
    let digits = rest.prefix { $0.isNumber || $0 == "." }
    return Double(digits)
}

func jsonString(_ s: String) -> String {
    var out = "\""
    for c in s.unicodeScalars {
        switch c {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default:
            if c.value < 0x20 { out += "\\u" + String(repeating: "0", count: 4 - String(c.value, radix: 16).count) + String(c.value, radix: 16) } else { out.unicodeScalars.append(c) }
        }
    }
    return out + "\""
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
}
