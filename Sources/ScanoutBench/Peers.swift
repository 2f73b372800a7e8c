import Foundation

/// The other tools a benchmark compares with, and their command for each suite.
public enum Peer {
    /// The peers `BenchConfiguration.peers` may name.
    public static let known = ["ffmpeg", "mpv", "gstreamer"]

    /// Where `program` is on PATH, nil when it is not installed.
    static func path(of program: String) -> String? {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return dirs.map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The argument vectors that do one measured run of `suite` on `input` (several for seek: one
    /// process per target), or nil when the peer has no equivalent.
    /// `decoding` is the decoder ffmpeg uses in the decode suite (Scanout's kind of decoder).
    static func commands(_ peer: String, suite: BenchSuite, input: String, threads: Int, codec: String,
                         seekTimes: [Double], decoding: PeerDecoding = .software, toneCurve: String? = nil) -> [[String]]? {
        let t = String(threads)
        if let toneCurve { return toneMappingCommands(peer, suite: suite, input: input, threads: t, curve: toneCurve) }
        switch (peer, suite) {
        case ("ffmpeg", .decode):
            return [["ffmpeg", "-hide_banner", "-nostdin", "-benchmark"] + decoding.ffmpegArguments(threads: threads)
                    + ["-i", input, "-map", "0:v:0", "-f", "null", "-"]]
        case ("ffmpeg", .render):
            return [["ffmpeg", "-hide_banner", "-nostdin", "-benchmark", "-threads", t, "-i", input, "-map", "0:v:0", "-pix_fmt", "rgb24", "-f", "null", "-"]]
        case ("ffmpeg", .startup):
            return [["ffmpeg", "-hide_banner", "-nostdin", "-threads", t, "-i", input, "-map", "0:v:0", "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "null", "-"]]
        case ("ffmpeg", .seek):
            return seekTimes.map { ["ffmpeg", "-hide_banner", "-nostdin", "-threads", t, "-ss", String($0), "-i", input, "-map", "0:v:0",
                                    "-frames:v", "1", "-f", "image2", "-c:v", "png", "-pix_fmt", "rgb24", "-y", "/dev/null"] }
        case ("mpv", .decode):
            return [["mpv", "--no-config", "--really-quiet", "--vo=null", "--ao=null", "--aid=no", "--untimed", "--vd-lavc-threads=\(t)", input]]
        case ("mpv", .startup):
            return [["mpv", "--no-config", "--really-quiet", "--vo=null", "--ao=null", "--aid=no", "--frames=1", "--vd-lavc-threads=\(t)", input]]
        case ("mpv", .play):
            // Real time on the null output; the script reports mpv's drop counters at the end.
            guard let script = mpvDropScript else { return nil }
            return [["mpv", "--no-config", "--really-quiet", "--vo=null", "--ao=null", "--aid=no", "--vd-lavc-threads=\(t)",
                     "--script=\(script)", input]]
        case ("gstreamer", .decode):
            return [["gst-launch-1.0", "-q", "filesrc", "location=\(input)", "!"] + gstDecoder(codec: codec, threads: threads) + ["!", "fakesink", "sync=false"]]
        case ("gstreamer", .render):
            return [["gst-launch-1.0", "-q", "filesrc", "location=\(input)", "!"] + gstDecoder(codec: codec, threads: threads)
                    + ["!", "videoconvert", "!", "video/x-raw,format=RGB", "!", "fakesink", "sync=false"]]
        default:
            return nil
        }
    }

    /// The render suite with tone mapping: ffmpeg's chain with the same curve, reference white
    /// 100 cd/m², no desaturation, to rgb24 (what `CPUToneMapper` is measured against); no other
    /// peer (nor ffmpeg for a curve its filter lacks) has an equivalent.
    static func toneMappingCommands(_ peer: String, suite: BenchSuite, input: String, threads: String, curve: String) -> [[String]]? {
        guard peer == "ffmpeg", suite == .render, ["hable", "mobius", "reinhard", "clip", "linear"].contains(curve) else { return nil }
        let chain = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=\(curve):desat=0,zscale=t=bt709,format=gbrp"
        return [["ffmpeg", "-hide_banner", "-nostdin", "-benchmark", "-threads", threads, "-i", input, "-map", "0:v:0", "-vf", chain,
                 "-pix_fmt", "rgb24", "-f", "null", "-"]]
    }

    /// A Lua script for mpv that prints `scanout-bench: dropped=N decoder-dropped=M delayed=K` on
    /// stderr when the file ends (mpv's frame-drop-count, decoder-frame-drop-count and
    /// vo-delayed-frame-count), written once to the temporary directory.
    static let mpvDropScript: String? = {
        let lua = """
        local counts = {}
        for _, p in ipairs({"frame-drop-count", "decoder-frame-drop-count", "vo-delayed-frame-count"}) do
          counts[p] = 0
          mp.observe_property(p, "number", function(_, v) if v then counts[p] = v end end)
        end
        mp.register_event("end-file", function()
          io.stderr:write(string.format("scanout-bench: dropped=%d decoder-dropped=%d delayed=%d\\n",
            counts["frame-drop-count"], counts["decoder-frame-drop-count"], counts["vo-delayed-frame-count"]))
        end)

        """
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-bench-mpv-drops-\(getpid()).lua").path
        return FileManager.default.createFile(atPath: path, contents: Data(lua.utf8)) ? path : nil
    }()

    /// mpv's drops (vo + decoder) and delayed frames from the script's line.
    static func mpvDrops(_ stderr: String) -> (dropped: Int, delayed: Int)? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.hasPrefix("scanout-bench: dropped=") }) else { return nil }
        var v: [String: Int] = [:]
        for part in line.dropFirst("scanout-bench: ".count).split(separator: " ") {
            let kv = part.split(separator: "=")
            if kv.count == 2, let n = Int(kv[1]) { v[String(kv[0])] = n }
        }
        guard let d = v["dropped"], let dd = v["decoder-dropped"], let late = v["delayed"] else { return nil }
        return (d + dd, late)
    }

    /// The libav decoder element for `codec` with the thread count set, or decodebin when there
    /// is no direct equivalent (its thread count is then the element's default).
    static func gstDecoder(codec: String, threads: Int) -> [String] {
        let element: String?
        switch codec {
        case "h264": element = "avdec_h264"
        case "hevc": element = "avdec_h265"
        case "vp9": element = "avdec_vp9"
        default: element = nil
        }
        guard let element else { return ["decodebin"] }
        return ["parsebin", "!", element, "max-threads=\(threads)"]
    }
}

/// The decoder the ffmpeg peer uses, so that it decodes the way Scanout's run did: libavcodec in
/// software with the same `-threads`, or the same kind of hardware decoder.
enum PeerDecoding: Equatable {
    case software
    /// NVDEC: `-hwaccel cuda -hwaccel_output_format cuda`.
    case cuda
    /// VA-API on a render node: `-hwaccel vaapi -hwaccel_output_format vaapi -vaapi_device NODE`.
    case vaapi(device: String?)

    /// From the decision's decoder label: "VA-API /dev/dri/renderD128 (vendor)", "NVDEC ...",
    /// anything else (libavcodec, the software stand-in for VA-API) decodes in software. This is
    /// the one place the label is read; a typed field on the decision can replace it here alone.
    init(scanoutDecoder label: String) {
        if label.hasPrefix("NVDEC") {
            self = .cuda
        } else if label.hasPrefix("VA-API") {
            let node = label.split(separator: " ").dropFirst().first.map(String.init)
            self = .vaapi(device: node?.hasPrefix("/") == true ? node : nil)
        } else {
            self = .software
        }
    }

    func ffmpegArguments(threads: Int) -> [String] {
        switch self {
        case .software: return ["-threads", String(threads)]
        case .cuda: return ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"]
        case .vaapi(let device): return (device.map { ["-vaapi_device", $0] } ?? []) + ["-hwaccel", "vaapi", "-hwaccel_output_format", "vaapi"]
        }
    }
}

/// The number after the last occurrence of `key` ("rtime=1.234s" → 1.234): ffmpeg's progress
/// line (`frame=`) and its `-benchmark` summary (`rtime=`).
func lastNumber(after key: String, in text: String) -> Double? {
    guard let range = text.range(of: key, options: .backwards) else { return nil }
    let rest = text[range.upperBound...].drop(while: { $0 == " " })
    return Double(rest.prefix { $0.isNumber || $0 == "." })
}
