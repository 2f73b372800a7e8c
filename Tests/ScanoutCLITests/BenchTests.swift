import Foundation
import ScanoutTestSupport
import Testing

@Suite("scanout bench")
struct BenchTests {
    private func json(_ r: ProcResult) throws -> [String: Any] {
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        return try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
    }

    @Test("decode: Scanout and ffmpeg on the same file, frame counts agree, a ratio per peer")
    func decodeAgainstFFmpeg() throws {
        let path = try Fixtures.path("counter.mp4")
        let root = try json(try CLI.run(["bench", "decode", path, "--runs", "2", "--warmup", "0", "--threads", "1", "--compare", "ffmpeg", "--json"]))
        #expect(root["suite"] as? String == "decode")
        let input = try #require((root["inputs"] as? [[String: Any]])?.first)
        #expect(input["units"] as? Int == 96)
        let results = try #require(input["results"] as? [[String: Any]])
        #expect(results.map { $0["tool"] as? String } == ["scanout", "ffmpeg"])
        for r in results {
            let values = try #require(r["values"] as? [Double])
            #expect(values.count == 2 && values.allSatisfy { $0 > 0 })
            #expect((r["peakKiB"] as? Int ?? 0) > 1024)
        }
        // ffmpeg's own count (from its -benchmark run) gave an in-process figure too.
        #expect((results[1]["inProcessFPS"] as? [Double])?.count == 2)
        let ratio = try #require((input["ratios"] as? [String: Any])?["ffmpeg"] as? Double)
        #expect(ratio > 0)
    }

    @Test("a peer that is not installed is reported as missing, not as a failure")
    func missingPeer() throws {
        let path = try Fixtures.path("counter.mp4")
        // A PATH with ffmpeg only.
        let scratch = try Scratch()
        try FileManager.default.createSymbolicLink(atPath: scratch.path("ffmpeg"), withDestinationPath: try Proc.which("ffmpeg"))
        let r = try CLI.run(["bench", "decode", path, "--runs", "1", "--warmup", "0", "--compare", "ffmpeg,mpv"],
                            environment: ["PATH": scratch.url.path])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stdoutText.contains("mpv: missing"))
        #expect(r.stdoutText.contains("ffmpeg"))
    }

    @Test("seek: the same targets for every run, per-seek figures; play: drops and pacing")
    func seekAndPlay() throws {
        let ts = try Fixtures.path("counter_open.ts")
        let seek = try json(try CLI.run(["bench", "seek", ts, "--runs", "1", "--warmup", "0", "--seeks", "5", "--json"]))
        let sInput = try #require((seek["inputs"] as? [[String: Any]])?.first)
        #expect(sInput["units"] as? Int == 5)
        #expect(seek["higherIsBetter"] as? Bool == false)
        let play = try json(try CLI.run(["bench", "play", try Fixtures.path("counter.mp4"), "--runs", "1", "--warmup", "0", "--json"]))
        let pInput = try #require((play["inputs"] as? [[String: Any]])?.first)
        #expect((pInput["dropped"] as? [Int])?.count == 1)
        #expect(pInput["units"] as? Int ?? 0 > 80)
    }

    @Test("--plot writes an SVG with a bar per tool and a distribution curve")
    func plot() throws {
        let scratch = try Scratch()
        let svgPath = scratch.path("plot.svg")
        let r = try CLI.run(["bench", "render", try Fixtures.path("counter.mp4"), try Fixtures.path("hevc10.mkv"),
                             "--runs", "1", "--warmup", "0", "--compare", "ffmpeg", "--plot", svgPath])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        // Two inputs × two tools.
        #expect(svg.components(separatedBy: "<title>scanout ").count - 1 == 2)
        #expect(svg.components(separatedBy: "<title>ffmpeg ").count - 1 == 2)
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)
    }

    @Test("zap: two live channels of one MPEG-TS file over loopback UDP, each change timed to its first frame, with its stages")
    func zap() async throws { try await offPool { [self] in try self.zapBlocking() } }

    func zapBlocking() throws {
        let ts = try Fixtures.path("counter_open_long.ts")
        let root = try json(try CLI.run(["bench", "zap", ts, "--zaps", "2", "--warmup", "0", "--json"], timeout: 90))
        #expect(root["channels"] as? Int == 2)
        // counter_open_long.ts: a keyframe every 100 frames at 30 fps.
        let gop = try #require(root["keyframeInterval"] as? Double)
        #expect(abs(gop - 100.0 / 30) < 0.001)
        let scanout = try #require((root["tools"] as? [[String: Any]])?.first)
        #expect(scanout["tool"] as? String == "scanout")
        let zaps = try #require(scanout["zapsMs"] as? [Double])
        #expect(zaps.count == 2 && zaps.allSatisfy { $0 > 0 }, "\(zaps)")
        // Each change waited for a keyframe that was sent after the request.
        let afterKeyframe = try #require(scanout["afterKeyframeMs"] as? [Double])
        #expect(afterKeyframe.count == 2 && zip(afterKeyframe, zaps).allSatisfy { $0 < $1 }, "\(afterKeyframe)")
        let stages = try #require(scanout["stagesMedianMs"] as? [String: Double])
        #expect(Set(stages.keys) == ["open", "probe", "decoder", "firstDecode"])
        let notTS = try CLI.run(["bench", "zap", try Fixtures.path("counter.mp4")])
        #expect(notTS.status == 1)
        #expect(notTS.stderrText.contains("bench zap sends MPEG-TS"), "\(notTS.stderrText)")
    }

    @Test("layout: 2 s trials of at most 2 zones of the 360p clip, each tool's search from one zone, the JSON report")
    func layout() async throws { try await offPool { [self] in try self.layoutBlocking() } }

    func layoutBlocking() throws {
        let scratch = try Scratch()
        let script = Fixtures.packageRoot.appendingPathComponent("tools/make-clips.sh").path
        let made = try Proc.run("/bin/bash", [script, scratch.url.path, "layout-360p30.mp4"], timeout: 300)
        #expect(made.status == 0, "\(made.stderrText)")
        let root = try json(try CLI.run(["bench", "layout", "--seconds", "2", "--max-zones", "2", "--sizes", "360", "--clips", scratch.url.path,
                                         "--json"], timeout: 300))
        #expect(root["suite"] as? String == "layout" && root["seconds"] as? Double == 2 && root["maxZones"] as? Int == 2)
        let size = try #require((root["sizes"] as? [[String: Any]])?.first)
        #expect(size["size"] as? String == "360p30" && size["width"] as? Int == 640 && size["height"] as? Int == 360)
        let tools = try #require(size["tools"] as? [[String: Any]])
        #expect(tools.map { $0["tool"] as? String } == ["scanout", "gstreamer", "ffmpeg"])
        #expect(tools[0]["missing"] == nil)
        for t in tools where t["missing"] == nil {
            let trials = try #require(t["trials"] as? [[String: Any]])
            #expect(trials.first?["zones"] as? Int == 1)
            #expect(trials.allSatisfy { ($0["zones"] as? Int ?? 0) <= 2 && !($0["detail"] as? String ?? "").isEmpty })
            // The figure is the most zones that passed (none: 0).
            let passed = trials.filter { $0["passed"] as? Bool == true }.compactMap { $0["zones"] as? Int }
            #expect(t["zones"] as? Int == passed.max() ?? 0)
        }
        let first = try #require((tools[0]["trials"] as? [[String: Any]])?.first)
        #expect((first["detail"] as? String ?? "").contains("late composes"), "\(first)")
        let missing = try CLI.run(["bench", "layout", "--sizes", "480", "--clips", scratch.url.path])
        #expect(missing.status == 1)
        #expect(missing.stderrLines == ["scanout: no \(scratch.path("layout-480p30.mp4")): make it with tools/make-clips.sh \(scratch.url.path) layout-480p30.mp4"])
    }

    @Test("bad options and inputs fail with one line")
    func badInput() throws {
        let unknown = try CLI.run(["bench", "decode", try Fixtures.path("counter.mp4"), "--compare", "vlc"])
        #expect(unknown.status != 0)
        #expect(unknown.stderrText.contains("unknown peer 'vlc'"))
        let path = try Fixtures.path("counter.mp4")
        let hw = try CLI.run(["bench", "decode", path, "--player-type", "hw", "--device", "/nonexistent/renderD128"])
        #expect(hw.status == 1)
        #expect(hw.stderrLines == ["scanout: \(path): --player-type hw unavailable: no usable render node (/nonexistent/renderD128: cannot open: No such file or directory)"])
        let missing = try CLI.run(["bench", "decode", "/nonexistent.mp4"])
        #expect(missing.status == 1)
        #expect(missing.stderrLines == ["scanout: /nonexistent.mp4: no such file"])
    }

    @Test("decode --streams 3: three whole decodes in one process, aggregate = all frames / wall; ffmpeg as 3 processes")
    func streams() throws {
        let path = try Fixtures.path("counter.mp4")
        let root = try json(try CLI.run(["bench", "decode", path, "--streams", "3", "--runs", "1", "--warmup", "0", "--threads", "1",
                                         "--compare", "ffmpeg", "--json"]))
        #expect(root["streams"] as? Int == 3)
        let input = try #require((root["inputs"] as? [[String: Any]])?.first)
        #expect(input["units"] as? Int == 3 * 96)
        let streams = try #require(input["streams"] as? [String: [String: Any]])
        for (tool, processes) in [("scanout", 1), ("ffmpeg", 3)] {
            let f = try #require(streams[tool], "no streams for \(tool)")
            #expect(f["processes"] as? Int == processes)
            #expect(f["frames"] as? [Int] == [96, 96, 96], "\(tool)")
            let seconds = try #require(f["seconds"] as? [Double])
            let wall = try #require(f["wallSeconds"] as? Double)
            #expect(seconds.count == 3 && wall > 0)
            // The aggregate is all frames over the wall time to the last stream's end; per stream, its own frames over its time.
            let aggregate = try #require(f["aggregateFPS"] as? Double)
            #expect(abs(aggregate - 288 / wall) <= 0.001 + 1e-9 * aggregate, "\(tool): \(aggregate) vs 288 / \(wall)")
            let perStream = try #require(f["perStreamFPS"] as? [Double])
            #expect(perStream.count == 3)
            for (fps, s) in zip(perStream, seconds) { #expect(abs(fps - 96 / s) <= 0.001 + 1e-9 * fps) }
            if tool == "scanout" {
                // Every stream started at the gate, so the last one to end set the wall time.
                #expect(abs((seconds.max() ?? 0) - wall) < 1e-9)
            } else {
                // The peer's processes started together; each took at most the group's time.
                #expect(seconds.allSatisfy { $0 <= wall })
            }
            #expect((f["aggregateFPSRuns"] as? [Double])?.count == 1)
        }
        let medians = try ["scanout", "ffmpeg"].map { try #require(streams[$0]?["aggregateFPSMedian"] as? Double) }
        let ratio = try #require((input["aggregateRatios"] as? [String: Any])?["ffmpeg"] as? Double)
        #expect(abs(ratio - medians[0] / medians[1]) < 0.002)
        #expect(input["peerDecoding"] as? String == "-threads 1")

        // The text report says the same.
        let text = try CLI.run(["bench", "decode", path, "--streams", "3", "--runs", "1", "--warmup", "0", "--threads", "1", "--compare", "ffmpeg"])
        #expect(text.status == 0, "exit \(text.status): \(text.stderrText)")
        #expect(text.stdoutText.contains("streams: 3 at once"))
        #expect(text.stdoutText.contains("a peer: 3 processes"))
        #expect(text.stdoutText.contains("last run: 288 frames in"))
        #expect(text.stdoutText.contains("ratio scanout/ffmpeg"))
        #expect(text.stdoutText.contains("ffmpeg decoder: -threads 1"))
    }

    @Test("--streams with the hw stand-in: each stream on the stand-in, named so, and ffmpeg decodes in software")
    func streamsOnStandIn() throws {
        let path = try Fixtures.path("counter.mp4")
        var env = ProcessInfo.processInfo.environment
        env["SCANOUT_FAULTS"] = "hw-standin"
        let root = try json(try CLI.run(["bench", "decode", path, "--streams", "2", "--runs", "1", "--warmup", "0", "--threads", "1",
                                         "--player-type", "hw", "--compare", "ffmpeg", "--json"], environment: env))
        let input = try #require((root["inputs"] as? [[String: Any]])?.first)
        #expect(input["decoder"] as? String == "hw: software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware)")
        #expect(input["peerDecoding"] as? String
                == "-threads 1 (software: Scanout's decoder is software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware), no hardware for ffmpeg to match)")
        let streams = try #require(input["streams"] as? [String: [String: Any]])
        #expect(streams["scanout"]?["frames"] as? [Int] == [96, 96])
        #expect(streams["ffmpeg"]?["processes"] as? Int == 2)
    }

    @Test("copies per frame: decode leaves hw frames on the GPU (0), GL render uploads software frames once, CPU render none")
    func copies() throws {
        let path = try Fixtures.path("counter.mp4")
        var env = ProcessInfo.processInfo.environment
        env["SCANOUT_FAULTS"] = "hw-standin"
        let hw = try json(try CLI.run(["bench", "decode", path, "--streams", "2", "--runs", "1", "--warmup", "0", "--player-type", "hw", "--json"],
                                      environment: env))
        #expect((hw["inputs"] as? [[String: Any]])?.first?["copies"] as? String
                == "0.00 CPU copies/frame (0 downloads, 0 uploads, 0 GPU copies, 0 imports)")
        let gl = try json(try CLI.run(["bench", "render", path, "--renderer", "gl", "--runs", "1", "--warmup", "0", "--json"]))
        #expect((gl["inputs"] as? [[String: Any]])?.first?["copies"] as? String
                == "1.00 CPU copies/frame (0 downloads, 96 uploads, 0 GPU copies, 0 imports)")
        let glHW = try json(try CLI.run(["bench", "render", path, "--renderer", "gl", "--player-type", "hw", "--runs", "1", "--warmup", "0", "--json"],
                                        environment: env))
        // Surfaceless llvmpipe imports no DMA-BUF: each stand-in frame is downloaded, then uploaded.
        #expect((glHW["inputs"] as? [[String: Any]])?.first?["copies"] as? String
                == "2.00 CPU copies/frame (96 downloads, 96 uploads, 0 GPU copies, 0 imports)")
        let cpu = try json(try CLI.run(["bench", "render", path, "--renderer", "cpu", "--runs", "1", "--warmup", "0", "--json"]))
        #expect((cpu["inputs"] as? [[String: Any]])?.first?["copies"] as? String
                == "0.00 CPU copies/frame (0 downloads, 0 uploads, 0 GPU copies, 0 imports)")
    }

    @Test("--streams 0 or negative is a usage error naming --streams; other suites refuse it")
    func badStreams() throws {
        let path = try Fixtures.path("counter.mp4")
        for args in [["--streams", "0"], ["--streams", "-2"], ["--streams=-1"], ["--streams", "65"]] {
            let r = try CLI.run(["bench", "decode", path] + args)
            #expect(r.status == 1, "\(args): exit \(r.status)")
            #expect(r.stderrText.contains("--streams must be 1...64 (concurrent decodes of each input), not"), "\(args): \(r.stderrText)")
        }
        let render = try CLI.run(["bench", "render", path, "--streams", "2"])
        #expect(render.status == 1)
        #expect(render.stderrText.contains("--streams applies to bench decode only"))
    }
}
