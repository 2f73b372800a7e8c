import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ScanoutDisplay
import ScanoutPlayer
@testable import ScanoutService
import ScanoutTestSupport
import Testing

@Suite("metrics exposition")
struct MetricsExpositionTests {
    @Test("every family has # HELP and # TYPE; build info and process metrics present; promtool agrees when installed")
    func helpAndType() async throws {
        let s = try await HeadlessService()
        let text = try await s.app.test(.router) { client in
            try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
        }
        var help = Set<String>(), type = [String: String](), samples = Set<String>()
        for line in text.split(separator: "\n").map(String.init) {
            let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
            if line.hasPrefix("# HELP ") { help.insert(parts[2]); #expect(parts.count == 4 && !parts[3].isEmpty, "\(line)") }
            else if line.hasPrefix("# TYPE ") { type[parts[2]] = parts[3] }
            else if !line.isEmpty { samples.insert(String(line.prefix { $0 != "{" && $0 != " " })) }
        }
        #expect(!type.isEmpty && Set(type.keys) == help, "TYPE without HELP or the reverse: \(Set(type.keys).symmetricDifference(help))")
        for sample in samples {
            let family = ["_bucket", "_sum", "_count"].reduce(sample) { $0.hasSuffix($1) && type[$0] == nil ? String($0.dropLast($1.count)) : $0 }
            #expect(type[family] != nil, "\(sample) has no TYPE")
        }
        for (name, kind) in [("scanout_frames_decoded_total", "counter"), ("scanout_decode_seconds", "histogram"), ("scanout_build_info", "gauge"),
                             ("process_resident_memory_bytes", "gauge"), ("process_open_fds", "gauge"), ("process_cpu_seconds_total", "counter"),
                             ("process_max_fds", "gauge"), ("process_start_time_seconds", "gauge")] {
            #expect(type[name] == kind, "\(name): \(type[name] ?? "missing")")
        }
        #expect(text.contains("scanout_build_info{version=\"\(ScanoutVersion.string)\""))
        func value(_ name: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
        }
        #expect((value("process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((value("process_open_fds") ?? 0) >= 3)
        #expect((value("process_cpu_seconds_total") ?? 0) > 0)
        for (name, kind) in [("scanout_first_frame_seconds", "histogram"), ("scanout_channel_changes_total", "counter")] {
            #expect(type[name] == kind, "\(name): \(type[name] ?? "missing")")
        }
        if let promtool = try? Proc.which("promtool") {
            let scratch = try Scratch()
            try text.write(toFile: scratch.path("metrics.txt"), atomically: true, encoding: .utf8)
            let r = try Proc.run("/bin/sh", ["-c", "\(promtool) check metrics < \(scratch.path("metrics.txt"))"])
            #expect(r.status == 0, "promtool: \(r.stdoutText)\(r.stderrText)")
        }
    }

    @Test("each tune's time to its first frame goes into a histogram; gapless transitions do not; channel changes are counted")
    func firstFrameAndChannels() throws {
        let metrics = PlayerMetrics()
        let stages = PreparationStages(open: 0.01, probe: 0.2, decoder: 0.001, firstDecode: 0.008)
        for seconds in [0.3, 0.6, 2.5] {
            metrics.observe(.firstFrame(item: 0, source: "udp://239.1.1.1:5000", sinceRequest: seconds, stages: stages))
        }
        metrics.observe(.firstFrame(item: 1, source: "b.mp4", sinceRequest: nil, stages: stages))
        metrics.observe(.channelChanged(id: "news", name: "News", source: "udp://239.1.1.1:5000"))
        let lines = metrics.render().split(separator: "\n").map(String.init)
        func sample(_ prefix: String) -> Double? { lines.first { $0.hasPrefix(prefix + " ") }.flatMap { Double($0.split(separator: " ").last!) } }
        #expect(sample("scanout_first_frame_seconds_count") == 3)
        #expect(abs((sample("scanout_first_frame_seconds_sum") ?? 0) - 3.4) < 1e-6)
        #expect(sample(#"scanout_first_frame_seconds_bucket{le="0.5"}"#) == 1)
        #expect(sample(#"scanout_first_frame_seconds_bucket{le="1.0"}"#) == 2)
        #expect(sample("scanout_channel_changes_total") == 1)
    }
}
