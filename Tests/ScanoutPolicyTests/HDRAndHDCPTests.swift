import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDecode
import ScanoutPolicy
import ScanoutRender
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// HDR output and HDCP on one screen: a type-1 policy on an HDR screen behaves as each alone.
@Suite("HDR and HDCP together")
struct HDRAndHDCPTests {
    @Test("a type-1 token on an HDR screen: HDR signalled at once, the picture held back until the link is Enabled, then shown in 10 bits")
    func typeOneOnAnHDRScreen() throws {
        let scratch = try Scratch()
        let clip = scratch.path("pq.mp4")
        try HDRClips.hdr(clip, colour: "white", frames: 4)
        let reader = try FrameReader(input: clip)
        var frames: [VideoFrame] = []
        while true {
            let f = VideoFrame()
            guard try reader.next(into: f) else { break }
            frames.append(f)
        }
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        try device.addConnectorProperty(30, "Content Protection", 0)
        try device.addConnectorProperty(30, "HDCP Content Type", 0)
        let renderer = MemoryScanoutRenderer()
        let display = try KMSDisplay(device: device, renderer: renderer, clock: ManualClock())
        display.outputFilter = OutputGuard(policy: ContentPolicy(externalOutput: .allow, hdcp: .type1, capture: .allow),
                                           configuration: .init(hdcpTimeout: .seconds(2)))
        func shows() throws -> Bool {
            let buffer = try #require(display.shownBuffer(named: "HDMI-A-1"))
            return try renderer.deepPixel(buffer, x: 5, y: 5).r > 900
        }

        try display.present(frames[0], orientation: .identity)
        // HDR as it would be alone; HDCP asked for as it would be alone, in the same real commit.
        let real = try #require(device.commits.last { $0.accepted && !$0.flags.contains(.testOnly) })
        #expect(real.request.value(of: 30, "Content Protection") == 1 && real.request.value(of: 30, "HDCP Content Type") == 1)
        #expect(device.hdrMetadata(connector: 30)?.eotf == .pq && device.value(of: 30, "Colorspace") == 9)
        #expect(try !shows(), "censored until the link is Enabled")
        #expect(display.shownBuffer(named: "HDMI-A-1")?.format == .xrgb2101010(.pq))

        try device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        try display.drainEvents()
        try display.present(frames[1], orientation: .identity)
        #expect(try shows())
        #expect(device.hdrMetadata(connector: 30)?.eotf == .pq && device.value(of: 30, "HDCP Content Type") == 1)

        // The link drops: censored at once, HDR left as it is.
        try device.simulatePropertyChange(objectID: 30, "Content Protection", to: 1, hotplugEvent: true)
        try display.drainEvents()
        try display.present(frames[2], orientation: .identity)
        #expect(try !shows())
        #expect(device.hdrMetadata(connector: 30)?.eotf == .pq)
    }
}
