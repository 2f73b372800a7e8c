import Foundation
import ScanoutTestSupport
import Testing

/// tools/bench-network.py on its tiny clip (4 s, 100 frames) with the short `quick-stall` profile
/// (200 kB/s, nothing at all from 1 s to 2.5 s): the figures it reports for Scanout agree with
/// Scanout's own summary and present log. Peers are not run here.
@Suite("bench-network")
struct NetworkBenchTests {
    private static let script = Fixtures.packageRoot.appendingPathComponent("tools/bench-network.py").path

    private func bench(_ scratch: Scratch, _ options: [String], python: String = "python3",
                       environment: [String: String]? = nil) throws -> (ProcResult, [String: Any]) {
        let r = try Proc.run(python, [Self.script, "--tiny", "--profiles", "quick-stall", "--out", scratch.url.path] + options,
                             timeout: 90, environment: environment)
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let data = try Data(contentsOf: scratch.url.appendingPathComponent("bench-network-tiny.json"))
        return (r, try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
    }

    @Test("play and serve through a stall: frames shown + dropped = the clip's, as the present log and the summary say")
    func scanoutThroughStall() throws {
        let scratch = try Scratch()
        let (r, root) = try bench(scratch, ["--media", "mp4", "--players", "scanout-play,scanout-serve", "--scanout", try CLI.binary.get(), "--keep-frames"])
        let runs = try #require(root["runs"] as? [[String: Any]])
        #expect(runs.map { $0["player"] as? String } == ["scanout-play", "scanout-serve"])
        // One table row per run on stdout.
        #expect(r.stdoutText.split(separator: "\n").filter { $0.hasPrefix("mp4 ") }.count == 2, "\(r.stdoutText)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: scratch.path("media-tiny/vod.mp4"))[.size] as? Int)
        for run in runs {
            let player = run["player"] as? String ?? "?"
            let f = try #require(run["figures"] as? [String: Any])
            let frames = try #require(run["frames"] as? [[Any]])
            let shown = try #require(f["shown"] as? Int), dropped = try #require(f["dropped"] as? Int)
            #expect(f["clipFrames"] as? Int == 100)
            #expect(shown + dropped == 100, "\(player): \(shown) shown + \(dropped) dropped")
            #expect(shown > 0, "\(player) showed nothing")
            // The present log has a line for every frame the summary (or /stats) counts as shown.
            #expect(frames.count == shown, "\(player): \(frames.count) lines in the present log, \(shown) shown")
            #expect(f["missing"] as? Int == 100 - frames.count)
            let wall = frames.compactMap { $0.first as? Double }, mediaTimes = frames.compactMap { $0[1] as? Double }
            #expect(wall.count == frames.count && mediaTimes.count == frames.count)
            #expect(zip(wall, wall.dropFirst()).allSatisfy { $0 <= $1 }, "\(player): wall times go back")
            #expect(zip(mediaTimes, mediaTimes.dropFirst()).allSatisfy { $0 < $1 }, "\(player): a media time shown twice or backwards")
            #expect(mediaTimes.allSatisfy { $0 >= 0 && $0 < 4.1 })
            let startup = try #require(f["startupSeconds"] as? Double), last = try #require(f["lastFrameSeconds"] as? Double)
            #expect(startup > 0 && abs(startup - (wall.first ?? 0)) < 0.001 && abs(last - (wall.last ?? 0)) < 0.001)
            // The freeze time is what the present log's wall times give: each gap longer than 2
            // frame intervals, less one interval, and the time from the last frame to the end when
            // it is longer than 3 intervals.
            let end = try #require(f["endSeconds"] as? Double)
            #expect(end >= last, "\(player): ended at \(end) s, before its last frame at \(last) s")
            let gaps = zip(wall, wall.dropFirst()).map { $1 - $0 }.filter { $0 > 0.08 } + [end - last].filter { $0 > 0.12 }
            let freeze = try #require(f["freezeSeconds"] as? Double)
            #expect(abs(freeze - gaps.reduce(0) { $0 + $1 - 0.04 }) < 0.003, "\(player): freeze \(freeze) s, gaps \(gaps)")
            #expect(freeze >= 0 && freeze <= end - startup)
            #expect(f["meanBitrateShown"] as? Int == 600_000)
            #expect(f["switches"] as? Int == 0)
            #expect(run["timedOut"] as? Bool == false)
            // The whole file went through the throttled link.
            #expect((run["server"] as? [String: Any])?["bytes"] as? Int ?? 0 >= size)
        }
        let serve = try #require(runs.last)
        #expect((serve["stats"] as? [String: Any])?["framesPresented"] as? Int == (serve["figures"] as? [String: Any])?["shown"] as? Int)
        #expect(serve["exitStatus"] as? Int == 0, "serve did not stop cleanly on SIGTERM")
    }

    @Test("serve on the HLS ladder: each frame shown has the variant its variantSwitch events say, and a bitrate of the ladder")
    func serveLadderVariants() throws {
        let scratch = try Scratch()
        let (_, root) = try bench(scratch, ["--media", "hls", "--players", "scanout-serve", "--scanout", try CLI.binary.get(), "--keep-frames"])
        let run = try #require((root["runs"] as? [[String: Any]])?.first)
        let f = try #require(run["figures"] as? [String: Any])
        let frames = try #require(run["frames"] as? [[Any]])
        let shown = try #require(f["shown"] as? Int), dropped = try #require(f["dropped"] as? Int)
        #expect(shown + dropped == 100 && frames.count == shown, "\(shown) shown + \(dropped) dropped, \(frames.count) logged")
        let events = try #require(run["events"] as? [[String: Any]])
        let switches = events.filter { $0["type"] as? String == "variantSwitch" }
        let heights = Set(switches.compactMap { ($0["to"] as? [String: Any])?["height"] as? Int })
        #expect(!switches.isEmpty && heights.isSubset(of: [240, 192, 120]))
        // Every frame's variant is one serve announced; the changes between frames shown are
        // no more than the switches announced after the start.
        let variants = frames.compactMap { $0.count > 2 ? $0[2] as? Int : nil }
        #expect(variants.count == frames.count && Set(variants).isSubset(of: heights), "\(Set(variants)) not in \(heights)")
        let changes = zip(variants, variants.dropFirst()).filter { $0 != $1 }.count
        #expect(f["switches"] as? Int == changes && changes <= switches.filter { $0["from"] is [String: Any] }.count)
        let mean = try #require(f["meanBitrateShown"] as? Int)
        #expect((100_000...400_000).contains(mean))
        #expect(run["timedOut"] as? Bool == false)
    }

    @Test("a peer that is not installed is skipped, and the output says so")
    func missingPeerSkipped() throws {
        let scratch = try Scratch()
        // A PATH with python3 and ffmpeg only (no mpv).
        let bin = scratch.url.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let python = try Proc.run("python3", ["-c", "import sys; print(sys.executable)"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("python3").path, withDestinationPath: python)
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("ffmpeg").path, withDestinationPath: try Proc.which("ffmpeg"))
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = bin.path
        let (r, root) = try bench(scratch, ["--media", "mp4", "--players", "mpv"], python: python, environment: env)
        #expect(r.stderrText.contains("mpv: not installed, skipped"), "\(r.stderrText)")
        #expect((root["runs"] as? [Any])?.isEmpty == true)
        #expect((root["skipped"] as? [String])?.first?.hasPrefix("mpv: not installed") == true)
    }
}
