import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ScanoutDisplay
import ScanoutKMS
import ScanoutPlayer
import ScanoutTesting
@testable import ScanoutService
import ScanoutTestSupport
import Testing

/// `POST /display`: the screens off (every CRTC inactive, playback paused, nothing presented) and
/// on again (lit by the next frame, playback going on).
@Suite("display power", .serialized)
struct DisplayPowerTests {
    /// Both CRTCs' `ACTIVE` on the fake device, and in its last commit (not a test), read on the
    /// player's thread.
    static func crtcs(_ service: InProcessService) async throws -> (active: [UInt64?], lastCommit: [UInt64?]) {
        try await service.player.perform { e in
            guard let device = (e.display as? KMSDisplay)?.device as? FakeKMSDevice else { return ([], []) }
            let last = device.commits.last { !$0.flags.contains(.testOnly) }
            return ([10, 11].map { device.value(of: $0, "ACTIVE") }, [10, 11].map { last?.request.value(of: $0, "ACTIVE") })
        }
    }

    @Test("off: ACTIVE 0 on both CRTCs in one commit, paused, no frame presented, /state and the event say so; a bad value named; on: lit again by the next frame, playing")
    func offAndOn() async throws {
        let service = try await InProcessService(keys: nil)
        defer { service.player.shutdown() }
        let clip = try Fixtures.path("counter_live.ts")
        try await Application(router: service.api.router()).test(.router) { client in
            #expect(try await service.request(client, .post, "/load", ["source": clip, "autoplay": true]).status == 200)
            try await service.wait { service.player.snapshot.framesPresented >= 3 }
            let off = try await service.request(client, .post, "/display", ["power": "off"])
            #expect(off.status == 200 && off.json["power"] as? String == "off")
            let afterOff = try await Self.crtcs(service)
            #expect(afterOff.active == [0, 0] && afterOff.lastCommit == [0, 0])
            let state = try await service.request(client, .get, "/state").json
            #expect(state["state"] as? String == "paused" && state["display"] as? String == "off")
            let shown = service.player.snapshot.framesPresented
            try await Task.sleep(for: .milliseconds(400))
            #expect(service.player.snapshot.framesPresented == shown)
            let bad = try await service.request(client, .post, "/display", ["power": "sideways"])
            #expect(bad.status == 400 && bad.json["field"] as? String == "power")
            let on = try await service.request(client, .post, "/display", ["power": "on"])
            #expect(on.status == 200 && on.json["power"] as? String == "on")
            try await service.wait { service.player.snapshot.framesPresented >= shown + 3 }
            #expect(try await Self.crtcs(service).active == [1, 1])
            #expect(service.player.snapshot.state == .playing)
            let powers = service.events.compactMap { e -> Bool? in if case .displayPower(let on) = e { return on } else { return nil } }
            #expect(powers == [false, true])
        }
    }

    @Test("HDMI-CEC beside KMS: off sends Standby to the TV after the CRTCs; on sends Image View On and Active Source first; a TV off the bus is a warning, the command still done")
    func cec() async throws {
        let service = try await InProcessService(keys: nil)
        defer { service.player.shutdown() }
        let bus = FakeCECBus()
        _ = try await service.player.perform { e in e.screenPower = [CECPowerSwitch(bus: bus)]; return 0 }
        let clip = try Fixtures.path("counter_live.ts")
        try await Application(router: service.api.router()).test(.router) { client in
            #expect(try await service.request(client, .post, "/load", ["source": clip, "autoplay": true]).status == 200)
            try await service.wait { service.player.snapshot.framesPresented >= 3 }
            #expect(try await service.request(client, .post, "/display", ["power": "off"]).status == 200)
            #expect(bus.sent.map(\.description) == ["40:36"])
            #expect(try await service.request(client, .post, "/display", ["power": "on"]).status == 200)
            #expect(bus.sent.map(\.description) == ["40:36", "40:04", "4f:82:10:00"])
            #expect(bus.claims == 1)

            bus.tvPresent = false
            let off = try await service.request(client, .post, "/display", ["power": "off"])
            #expect(off.status == 200 && off.json["power"] as? String == "off")
            #expect(try await Self.crtcs(service).active == [0, 0])
            let warnings = service.events.compactMap { e -> String? in if case .warning(let m) = e { return m } else { return nil } }
            #expect(warnings.contains { $0.hasPrefix("HDMI-CEC on /dev/cec-fake: the screen was not switched off: HDMI-CEC: the TV did not acknowledge opcode 0x36") }, "\(warnings)")
        }
    }
}
