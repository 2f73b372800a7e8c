/// The other tools a benchmark compares with, and their command for each suite.
enum Peer {
    static let known = ["ffmpeg", "mpv", "gstreamer"]

    /// The argument vectors that do one measured run of `suite` on `input` (several for seek: one
    /// process per target), or nil when the peer has no equivalent.
    static func commands(_ peer: String, suite: BenchSuite, input: String, threads: Int, codec: String,
                         seekTimes: [Double]) -> [[String]]? {
        let t = String(threads)
        switch (peer, suite) {
        case ("ffmpeg", .decode):
            return [["ffmpeg", "-hide_banner", "-nostdin", "-benchmark", "-threads", t, "-i", input, "-map", "0:v:0", "-f", "null", "-"]]
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
        case ("gstreamer", .decode):
            return [["gst-launch-1.0", "-q", "filesrc", "location=\(input)", "!"] + gstDecoder(codec: codec, threads: threads) + ["!", "fakesink", "sync=false"]]
        case ("gstreamer", .render):
            return [["gst-launch-1.0", "-q", "filesrc", "location=\(input)", "!"] + gstDecoder(codec: codec, threads: threads)
                    + ["!", "videoconvert", "!", "video/x-raw,format=RGB", "!", "fakesink", "sync=false"]]
        default:
            return nil
        }
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
