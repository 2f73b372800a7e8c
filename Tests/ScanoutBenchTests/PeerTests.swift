@testable import ScanoutBench
import Testing

@Suite("bench peers")
struct PeerTests {
    @Test("each suite's command line per peer, the same decoder kind for ffmpeg, none where a peer has no equivalent")
    func commands() throws {
        let vaapi = try #require(Peer.commands("ffmpeg", suite: .decode, input: "in.mp4", threads: 2, codec: "h264", seekTimes: [],
                                               decoding: .vaapi(device: "/dev/dri/renderD128")))
        #expect(vaapi == [["ffmpeg", "-hide_banner", "-nostdin", "-benchmark", "-vaapi_device", "/dev/dri/renderD128", "-hwaccel", "vaapi",
                           "-hwaccel_output_format", "vaapi", "-i", "in.mp4", "-map", "0:v:0", "-f", "null", "-"]])
        let seeks = try #require(Peer.commands("ffmpeg", suite: .seek, input: "in.ts", threads: 1, codec: "h264", seekTimes: [1.5, 3]))
        #expect(seeks.count == 2)
        #expect(seeks.map { $0[6] } == ["1.5", "3.0"])
        #expect(seeks[0] == ["ffmpeg", "-hide_banner", "-nostdin", "-threads", "1", "-ss", "1.5", "-i", "in.ts", "-map", "0:v:0",
                             "-frames:v", "1", "-f", "image2", "-c:v", "png", "-pix_fmt", "rgb24", "-y", "/dev/null"])
        let gst = try #require(Peer.commands("gstreamer", suite: .render, input: "a.mkv", threads: 4, codec: "hevc", seekTimes: []))
        #expect(gst == [["gst-launch-1.0", "-q", "filesrc", "location=a.mkv", "!", "parsebin", "!", "avdec_h265", "max-threads=4",
                         "!", "videoconvert", "!", "video/x-raw,format=RGB", "!", "fakesink", "sync=false"]])
        #expect(Peer.commands("mpv", suite: .render, input: "a.mp4", threads: 1, codec: "h264", seekTimes: []) == nil)
        #expect(Peer.commands("gstreamer", suite: .play, input: "a.mp4", threads: 1, codec: "h264", seekTimes: []) == nil)
        #expect(Peer.commands("ffmpeg", suite: .play, input: "a.mp4", threads: 1, codec: "h264", seekTimes: []) == nil)
    }

    @Test("GStreamer's decoder: the libav element for h264, hevc and vp9, decodebin for anything else")
    func gstreamerDecoder() {
        #expect(Peer.gstDecoder(codec: "h264", threads: 3) == ["parsebin", "!", "avdec_h264", "max-threads=3"])
        #expect(Peer.gstDecoder(codec: "vp9", threads: 0) == ["parsebin", "!", "avdec_vp9", "max-threads=0"])
        #expect(Peer.gstDecoder(codec: "av1", threads: 3) == ["decodebin"])
    }

    @Test("mpv's drops: the script's last line, vo and decoder drops added; nil without a whole line")
    func mpvDrops() throws {
        let stderr = "scanout-bench: dropped=1 decoder-dropped=0 delayed=0\n[vo] something\nscanout-bench: dropped=3 decoder-dropped=2 delayed=7\n"
        let drops = try #require(Peer.mpvDrops(stderr))
        #expect(drops.dropped == 5 && drops.delayed == 7)
        #expect(Peer.mpvDrops("scanout-bench: dropped=3 delayed=7\n") == nil)
        #expect(Peer.mpvDrops("Exiting... (End of file)\n") == nil)
    }

    @Test("ffmpeg's figures: the number after the last frame= and rtime=")
    func ffmpegNumbers() {
        let stderr = "frame=   48 fps=0.0 q=-0.0 size=N/A time=00:00:01.60\rframe=   96 fps=512 q=-0.0 Lsize=N/A time=00:00:03.20\n"
            + "bench: utime=0.180s stime=0.020s rtime=0.187s\nbench: maxrss=51200KiB\n"
        #expect(lastNumber(after: "frame=", in: stderr) == 96)
        #expect(lastNumber(after: "rtime=", in: stderr) == 0.187)
        #expect(lastNumber(after: "speed=", in: stderr) == nil)
    }
}
