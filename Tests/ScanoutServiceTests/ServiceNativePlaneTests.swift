import Foundation
import Hummingbird
import HummingbirdTesting
import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutTestSupport
import Testing

// playerType per item on a KMS screen: hardware frames (the VA-API stand-in) on a plane, or
// composited when the plane refuses them.

@Suite("native planes in the service")
struct ServiceNativePlaneTests {
    /// Loads the counter clip with `playerType` (through the VA-API stand-in) and waits for 10
    /// frames on screen.
    func play(playerType: String, refusing: Bool = false) async throws -> KMSDisplay.Counters {
        let clip = try Fixtures.path("counter.mp4")
        let service = try await InProcessService(keys: nil, faults: FaultPlan(standIn: true)) { fakeScreens(panel: false, overlay: true, refusing: refusing) }
        defer { service.player.shutdown() }
        return try await Application(router: service.api.router()).test(.router) { client in
            let load = try await service.request(client, .post, "/load", ["source": clip, "playerType": playerType])
            #expect(load.status == 200)
            #expect((load.json["playlist"] as? [[String: Any]])?.first?["playerType"] as? String == playerType)
            try await service.wait { service.player.snapshot.framesPresented >= 10 }
            #expect(service.player.snapshot.framesPresented >= 10)
            return try await service.kmsCounters()
        }
    }

    @Test("an item with playerType native goes on the overlay plane as decoded")
    func nativeItemGoesOnAPlane() async throws {
        let c = try await play(playerType: "native")
        #expect(c.native >= 10)
        #expect(c.composited == 0)
    }

    @Test("a plane that refuses the frame: composited instead, every frame still shown")
    func refusedPlaneFallsBackToComposition() async throws {
        let c = try await play(playerType: "native", refusing: true)
        #expect(c.native == 0)
        #expect(c.nativeRejected >= 10)
        #expect(c.composited >= 10)
    }

    @Test("an item with playerType sw is composited (no DMA-BUF to put on a plane)")
    func softwareItemIsComposited() async throws {
        let c = try await play(playerType: "sw")
        #expect(c.native == 0 && c.nativeRejected == 0)
        #expect(c.composited >= 10)
    }
}
