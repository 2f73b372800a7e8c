import Foundation
@testable import ScanoutBench
import Testing

@Suite("bench layout: grid, peers, search")
struct LayoutPeerTests {
    /// The `NAME=VALUE` arguments of `argv` that start with `prefix`, as a dictionary.
    private func properties(_ argv: [String], prefix: String) -> [String: String] {
        var out: [String: String] = [:]
        for a in argv where a.hasPrefix(prefix) {
            let kv = a.split(separator: "=", maxSplits: 1)
            out[String(kv[0])] = String(kv[1])
        }
        return out
    }

    @Test("grid: ⌈√N⌉ columns, as many rows as it takes, cells cut at whole pixels with no gap")
    func grid() {
        #expect([1, 2, 3, 4, 5, 9, 10, 16, 17].map { LayoutGrid(zones: $0).columns } == [1, 2, 2, 2, 3, 3, 4, 4, 5])
        #expect([1, 2, 3, 4, 5, 9, 10, 16, 17].map { LayoutGrid(zones: $0).rows } == [1, 1, 2, 2, 2, 3, 3, 4, 4])
        let seven = LayoutGrid(zones: 49)
        #expect(seven.columns == 7)
        #expect((0..<7).map { seven.cell($0).x } == [0, 274, 548, 822, 1097, 1371, 1645])
        #expect(seven.cell(6).x + seven.cell(6).width == 1920)
        #expect(seven.cell(48).y + seven.cell(48).height == 1080)
    }

    @Test("pictures fitted into their cells as Scanout's fit places them: centred, letterboxed in a tall cell")
    func pictures() {
        #expect(LayoutGrid(zones: 2).pictures(sourceWidth: 1920, sourceHeight: 1080).map(\.description)
                == ["960x540+0+270", "960x540+960+270"])
        #expect(LayoutGrid(zones: 5).picture(4, sourceWidth: 640, sourceHeight: 360).description == "640x360+640+630")
        // A 4:3 picture in a 16:9 cell: pillarboxed.
        #expect(LayoutGrid(zones: 1).picture(0, sourceWidth: 640, sourceHeight: 480).description == "1440x1080+240+0")
    }

    @Test("GStreamer, 2x2: each compositor pad placed and scaled to its quadrant, a decodebin branch per zone ending after the trial's frames")
    func gstreamerTwoByTwo() {
        let argv = LayoutPeers.gstreamer(clip: "/c/a.mp4", seconds: 60, grid: LayoutGrid(zones: 4), sourceWidth: 1920, sourceHeight: 1080)
        #expect(Array(argv.prefix(7)) == ["gst-launch-1.0", "-e", "-m", "-v", "compositor", "name=comp", "background=black"])
        #expect(properties(argv, prefix: "sink_") == [
            "sink_0::xpos": "0", "sink_0::ypos": "0", "sink_0::width": "960", "sink_0::height": "540",
            "sink_1::xpos": "960", "sink_1::ypos": "0", "sink_1::width": "960", "sink_1::height": "540",
            "sink_2::xpos": "0", "sink_2::ypos": "540", "sink_2::width": "960", "sink_2::height": "540",
            "sink_3::xpos": "960", "sink_3::ypos": "540", "sink_3::width": "960", "sink_3::height": "540",
        ])
        let text = argv.joined(separator: " ")
        #expect(text.contains(" ! video/x-raw,width=1920,height=1080,framerate=30/1 ! fpsdisplaysink video-sink=\"fakesink sync=true qos=true max-lateness=33333333\" text-overlay=false signal-fps-measurements=true fps-update-interval=1000 "))
        for i in 0..<4 {
            #expect(text.contains("filesrc location=\"/c/a.mp4\" ! decodebin ! identity eos-after=1800 ! comp.sink_\(i)"))
        }
        #expect(argv.filter { $0 == "filesrc" }.count == 4)
    }

    @Test("GStreamer, 3x3: pads at thirds, 640x360 each")
    func gstreamerThreeByThree() {
        let argv = LayoutPeers.gstreamer(clip: "a.mp4", seconds: 2, grid: LayoutGrid(zones: 9), sourceWidth: 1280, sourceHeight: 720)
        let p = properties(argv, prefix: "sink_")
        #expect(p.count == 36)
        for i in 0..<9 {
            #expect(p["sink_\(i)::xpos"] == String(640 * (i % 3)) && p["sink_\(i)::ypos"] == String(360 * (i / 3)))
            #expect(p["sink_\(i)::width"] == "640" && p["sink_\(i)::height"] == "360")
        }
        #expect(argv.filter { $0 == "eos-after=60" }.count == 9)
    }

    @Test("ffmpeg: N looping real-time inputs, each scaled, xstack at the pictures' corners, padded to the canvas where they fall short")
    func ffmpeg() {
        let argv = LayoutPeers.ffmpeg(clip: "a.mp4", seconds: 60, grid: LayoutGrid(zones: 4), sourceWidth: 1920, sourceHeight: 1080)
        #expect(argv.filter { $0 == "-re" }.count == 4)
        #expect(argv.joined(separator: " ").contains("-re -stream_loop -1 -i a.mp4 -re -stream_loop -1 -i a.mp4"))
        #expect(Array(argv.suffix(7)) == ["-map", "[out]", "-t", "60.000", "-f", "null", "-"])
        let filter = argv[argv.firstIndex(of: "-filter_complex")! + 1]
        #expect(filter == "[0:v]scale=960:540[v0];[1:v]scale=960:540[v1];[2:v]scale=960:540[v2];[3:v]scale=960:540[v3];"
                + "[v0][v1][v2][v3]xstack=inputs=4:layout=0_0|960_0|0_540|960_540:fill=black[out]")
        let nine = LayoutGrid(zones: 9).pictures(sourceWidth: 640, sourceHeight: 360)
        #expect(LayoutPeers.xstackLayout(nine) == "0_0|640_0|1280_0|0_360|640_360|1280_360|0_720|640_720|1280_720")
        // Two zones side by side: letterboxed pictures that stop 270 rows short of the bottom.
        #expect(LayoutPeers.ffmpegFilter(grid: LayoutGrid(zones: 2), sourceWidth: 1920, sourceHeight: 1080)
                == "[0:v]scale=960:540[v0];[1:v]scale=960:540[v1];[v0][v1]xstack=inputs=2:layout=0_270|960_270:fill=black,pad=1920:1080:0:0:black[out]")
        // One zone: xstack takes two inputs at least.
        #expect(LayoutPeers.ffmpegFilter(grid: LayoutGrid(zones: 1), sourceWidth: 640, sourceHeight: 480)
                == "[0:v]scale=1440:1080,pad=1920:1080:240:0:black[out]")
    }

    static let gstreamerOutput = """
        Setting pipeline to PAUSED ...
        Pipeline is PREROLLING ...
        Setting pipeline to PLAYING ...
        Got message #4285 from element "avdec_h264-3" (qos): GstMessageQOS, live=(boolean)false, running-time=(guint64)66666666, jitter=(gint64)1200, proportion=(double)1.5, quality=(int)1000000, format=(GstFormat)buffers, processed=(guint64)1, dropped=(guint64)1;
        Got message #4286 from element "comp" (qos): GstMessageQOS, live=(boolean)false, running-time=(guint64)100000000, jitter=(gint64)18180390, proportion=(double)1.70, quality=(int)1000000, format=(GstFormat)buffers, processed=(guint64)1, dropped=(guint64)2;
        Got message #4352 from element "comp" (qos): GstMessageQOS, live=(boolean)false, running-time=(guint64)166666666, jitter=(gint64)5875572, proportion=(double)1.63, quality=(int)1000000, format=(GstFormat)buffers, processed=(guint64)2, dropped=(guint64)3;
        Got message #4400 from element "fakesink0" (qos): GstMessageQOS, live=(boolean)false, running-time=(guint64)200000000, format=(GstFormat)buffers, processed=(guint64)5, dropped=(guint64)18446744073709551615;
        /GstPipeline:pipeline0/GstFPSDisplaySink:fpsdisplaysink0: last-message = rendered: 118, dropped: 0, current: 30.20, average: 29.02
        /GstPipeline:pipeline0/GstFPSDisplaySink:fpsdisplaysink0: last-message = rendered: 148, dropped: 1, fps: 29.93, drop rate: 1.00
        handling interrupt.
        EOS on shutdown enabled -- Forcing EOS on the pipeline
        Got EOS from element "pipeline0".
        Execution ended after 0:01:00.001500000
        Setting pipeline to NULL ...
        """

    @Test("GStreamer's drops: each element's last QoS count summed (a count it does not keep: its messages), the sink's counts, the time played")
    func gstreamerDrops() {
        let d = GStreamerDrops(Self.gstreamerOutput)
        #expect(d.qosMessages == 4)
        #expect(d.droppedByElement == ["avdec_h264-3": 1, "comp": 3, "fakesink0": 1])
        #expect(d.dropped == 5)
        #expect(d.sinkRendered == 148 && d.sinkDropped == 1)
        #expect(abs((d.playingSeconds ?? 0) - 60.0015) < 1e-9)
        let clean = GStreamerDrops("Setting pipeline to PLAYING ...\n/GstPipeline:pipeline0/GstFPSDisplaySink:fpsdisplaysink0: last-message = rendered: 1800, dropped: 0, current: 30.00, average: 30.00\nExecution ended after 0:00:02.000000000\n")
        #expect(clean.dropped == 0 && clean.qosMessages == 0 && clean.sinkRendered == 1800 && clean.playingSeconds == 2)
        #expect(GStreamerDrops("ERROR: pipeline could not be constructed").playingSeconds == nil)
    }

    @Test("ffmpeg's pace: the last progress line's time and speed, and how far its own time ran past the media time")
    func ffmpegPace() throws {
        let stderr = "Input #0, mov,mp4 ...\nframe=    1 fps=0.0 q=-0.0 size=N/A time=00:00:00.03 bitrate=N/A speed=N/A    \r"
            + "frame=  289 fps= 30 q=-0.0 size=N/A time=00:00:09.63 bitrate=N/A speed=0.996x    \r"
            + "frame=  300 fps= 30 q=-0.0 Lsize=N/A time=00:00:10.00 bitrate=N/A speed=0.8x    \nvideo:141kB audio:0kB\n"
        let pace = try #require(FFmpegPace(stderr))
        #expect(pace == FFmpegPace(mediaSeconds: 10, speed: 0.8))
        #expect(abs(pace.lagSeconds - 2.5) < 1e-9)
        #expect(FFmpegPace("frame=    1 fps=0.0 q=-0.0 size=N/A time=00:00:00.03 bitrate=N/A speed=N/A    \r") == nil)
        #expect(FFmpegPace("a.mp4: No such file or directory\n") == nil)
    }

    @Test("the search: 1, 2, 4, 8 until a failure, then bisection; a tool that passes up to 5 zones gets 5")
    func search() throws {
        var tried: [Int] = []
        let s = ZoneSearch.run(maxZones: 16) { n in
            tried.append(n)
            return n <= 5
        }
        #expect(s.best == 5)
        #expect(tried == [1, 2, 4, 8, 6, 5])
        #expect(s.trials.map(\.passed) == [true, true, true, false, false, true])
        #expect(ZoneSearch.run(maxZones: 16) { _ in true }.trials.map(\.zones) == [1, 2, 4, 8, 16])
        let capped = ZoneSearch.run(maxZones: 10) { _ in true }
        #expect(capped.trials.map(\.zones) == [1, 2, 4, 8, 10] && capped.best == 10)
        let none = ZoneSearch.run(maxZones: 16) { _ in false }
        #expect(none.trials.map(\.zones) == [1] && none.best == 0)
        #expect(ZoneSearch.run(maxZones: 16) { $0 <= 7 }.trials.map(\.zones) == [1, 2, 4, 8, 6, 7])
    }
}
