import Foundation
import ScanoutTestSupport
import Testing

/// `play` stopped by SIGINT or SIGTERM: the summary is printed and the status is 128 + the
/// signal's number, as shells expect.
@Suite("scanout play stopped by a signal")
struct PlaySignalTests {
    struct Stopped {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Starts `play` on a clip that lasts about 13 s (counter.mp4 at a quarter of its rate), sends
    /// `signal` once playback has begun, and returns the status, stdout and stderr.
    static func play(stoppedBy signal: Int32) throws -> Stopped {
        let scratch = try Scratch()
        let outPath = scratch.path("stdout"), errPath = scratch.path("stderr")
        guard FileManager.default.createFile(atPath: outPath, contents: nil),
              FileManager.default.createFile(atPath: errPath, contents: nil) else { throw SupportError("cannot create capture files") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try CLI.binary.get())
        p.arguments = ["play", try Fixtures.path("counter.mp4"), "--output", "headless", "--renderer", "cpu", "--rate", "0.25"]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        let start = Date()
        func stderrText() -> String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }
        // The first progress line comes once frames are being presented.
        while !stderrText().contains(" frame "), p.isRunning, Date().timeIntervalSince(start) < 60 { usleep(20_000) }
        guard p.isRunning else { throw SupportError("play ended before the signal: \(stderrText())") }
        kill(p.processIdentifier, signal)
        while p.isRunning, Date().timeIntervalSince(start) < 90 { usleep(20_000) }
        guard !p.isRunning else { throw SupportError("play did not stop after signal \(signal): \(stderrText())") }
        return Stopped(status: p.terminationStatus, stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                       stderr: stderrText())
    }

    static func check(_ r: Stopped, status: Int32, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(r.status == status, "exit \(r.status): \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.hasSuffix("\nscanout: stopped by signal\n"), sourceLocation: sourceLocation)
        let line = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("summary: ") }, sourceLocation: sourceLocation)
        // Stopped part way: fewer than the clip's 96 frames, but some.
        let presented = try #require(Int(line.dropFirst("summary: ".count).prefix { $0 != " " }), sourceLocation: sourceLocation)
        #expect(presented > 0 && presented < 96, "\(line)", sourceLocation: sourceLocation)
        #expect(r.stdout.contains("\ndecoder: "), sourceLocation: sourceLocation)
    }

    @Test("SIGINT: summary printed, exit 130")
    func sigint() throws { try Self.check(try Self.play(stoppedBy: SIGINT), status: 130) }

    @Test("SIGTERM: summary printed, exit 143")
    func sigterm() throws { try Self.check(try Self.play(stoppedBy: SIGTERM), status: 143) }
}
