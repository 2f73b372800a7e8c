import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutService
import ScanoutTestSupport
import Testing

/// `GET /snapshot`: what is on screen as a PNG, shrunk, never showing content that denies
/// capture, at most two a second.
@Suite("snapshots of the screen", .serialized)
struct SnapshotTests {
    /// The PNG's size and its brightest byte (of its first plane: RGB packed), decoded by libavcodec.
    static func decode(_ png: [UInt8], name: String = "snapshot.png") throws -> (width: Int, height: Int, brightest: UInt8) {
        let scratch = try Scratch()
        let path = scratch.path(name)
        try Data(png).write(to: URL(fileURLWithPath: path))
        let reader = try FrameReader(input: path)
        let frame = VideoFrame()
        guard try reader.next(into: frame) else { throw SupportError("the PNG holds no picture") }
        var brightest: UInt8 = 0
        for plane in 0..<1 { frame.withPlaneRows(plane) { row in brightest = max(brightest, row.max() ?? 0) } }
        return (frame.width, frame.height, brightest)
    }

    @Test("nothing shown: 404; then a PNG of the screen shrunk to 160 wide; a bad width named; content that denies capture black with Scanout-Censored")
    func snapshots() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let noCapture = try await publisher.token(capture: "deny")
        let service = try await InProcessService(keys: publisher.keyFile)
        defer { service.player.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            #expect(try await client.execute(uri: "/snapshot", method: .get).status == .notFound)
            #expect(try await service.request(client, .post, "/load", ["source": clip, "autoplay": true]).status == 200)
            try await service.wait { service.player.snapshot.framesPresented >= 3 }
            let shot = try await client.execute(uri: "/snapshot?width=160", method: .get)
            #expect(shot.status == .ok && shot.headers[.contentType] == "image/png" && shot.headers[HTTPField.Name("Scanout-Censored")!] == nil)
            let picture = try Self.decode(Array(buffer: shot.body))
            #expect(picture.width == 160 && picture.height == 120 && picture.brightest > 100, "\(picture)")
            let bad = refusal(try await client.execute(uri: "/snapshot?width=5", method: .get))
            #expect(bad.status == 400 && bad.field == "width")
            let jpeg = try await client.execute(uri: "/snapshot?width=160&format=jpeg", method: .get)
            let jpegBytes = Array(buffer: jpeg.body)
            #expect(jpeg.status == .ok && jpeg.headers[.contentType] == "image/jpeg" && jpegBytes.starts(with: [0xff, 0xd8, 0xff]))
            let asJPEG = try Self.decode(jpegBytes, name: "snapshot.jpg")
            #expect(asJPEG.width == 160 && asJPEG.height == 120 && asJPEG.brightest > 100, "\(asJPEG)")
            #expect(jpegBytes.count < Array(buffer: shot.body).count, "\(jpegBytes.count) bytes of JPEG")
            #expect(refusal(try await client.execute(uri: "/snapshot?format=gif", method: .get)).field == "format")
            try await Task.sleep(for: .seconds(3))   // the bucket refills
            #expect(try await service.request(client, .post, "/load", ["source": clip, "token": noCapture, "autoplay": true]).status == 200)
            try await service.wait { service.player.snapshot.framesPresented >= 3 && service.player.snapshot.playlist.first?.token == noCapture }
            let censored = try await client.execute(uri: "/snapshot", method: .get)
            #expect(censored.status == .ok)
            #expect(censored.headers[HTTPField.Name("Scanout-Censored")!] == "the content policy denies capture")
            #expect(try Self.decode(Array(buffer: censored.body)).brightest == 0)
        }
    }

    @Test("two snapshots a second, four at once: the fifth at once refused, one more half a second later")
    func rate() {
        let limit = RateLimiter(perSecond: 2, burst: 4)
        let t = ClockTime(nanoseconds: 1_000_000_000_000)
        func take(_ at: ClockTime) -> Bool { limit.take("snapshot", now: at) == .allowed }
        var taken: [Bool] = []
        for _ in 0..<5 { taken.append(take(t)) }
        #expect(taken == [true, true, true, true, false])
        let half = take(t + .milliseconds(500)), again = take(t + .milliseconds(500))
        #expect(half && !again)
        let later = take(t + .seconds(10))
        #expect(later)
    }
}

@Suite("scanout snapshot", .serialized)
struct SnapshotCommandTests {
    @Test("scanout snapshot -o: the running service's screen as a PNG through its socket, 200 wide; nothing running: exit 1 saying so")
    func command() throws {
        let server = try ServeProcess(arguments: ["--output", "headless", "--output-size", "320x240", "--repeat", "all", try Fixtures.path("counter.mp4")])
        let file = server.scratch.path("now.png")
        var shown = false
        for _ in 0..<50 where !shown {
            shown = ((try? server.request("GET", "/stats").json?["framesPresented"] as? Int) ?? 0) >= 3
            if !shown { usleep(100_000) }
        }
        #expect(shown)
        let r = try Proc.run(try ScanoutBinary.path(), ["snapshot", "--socket", server.socketPath, "--width", "200", "-o", file])
        #expect(r.status == 0, "\(r.stderrText)")
        let png = try SnapshotTests.decode(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(png.width == 200 && png.height == 150 && png.brightest > 100)
        _ = server.terminate()
        let none = try Proc.run(try ScanoutBinary.path(), ["snapshot", "--socket", server.scratch.path("none.sock"), "-o", file])
        #expect(none.status == 1 && none.stderrText.contains("cannot reach the service"))
    }
}
