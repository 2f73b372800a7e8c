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
        if let promtool = try? Proc.which("promtool") {
            let scratch = try Scratch()
            try text.write(toFile: scratch.path("metrics.txt"), atomically: true, encoding: .utf8)
            let r = try Proc.run("/bin/sh", ["-c", "\(promtool) check metrics < \(scratch.path("metrics.txt"))"])
            #expect(r.status == 0, "promtool: \(r.stdoutText)\(r.stderrText)")
        }
    }
}
