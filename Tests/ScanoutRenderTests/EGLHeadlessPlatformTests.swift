import Testing
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

// Mesa 22.3 offers both headless platforms here: surfaceless, and EGL_EXT_platform_device with
// one software device (EGL_MESA_device_software).

@Suite("headless EGL platforms")
struct EGLHeadlessPlatformTests {
    @Test("surfaceless first, nothing passed over")
    func surfacelessFirst() throws {
        let ctx = try EGLDisplayContext()
        #expect(ctx.platform == .surfaceless)
        #expect(ctx.headlessChoice == HeadlessPlatformChoice(platform: .surfaceless, device: nil, passedOver: []))
        #expect(ctx.headlessChoice?.description == "surfaceless")
    }

    @Test("without EGL_MESA_platform_surfaceless, the device platform, with surfaceless's reason recorded")
    func deviceWhenSurfacelessIsMissing() throws {
        let ctx = try EGLDisplayContext(options: .init(hiddenExtensions: ["EGL_MESA_platform_surfaceless"]))
        let choice = try #require(ctx.headlessChoice)
        #expect(ctx.platform == .device && choice.platform == .device)
        let reason = RenderError.missingExtension("EGL_MESA_platform_surfaceless", neededFor: "the surfaceless EGL platform").description
        #expect(choice.passedOver == [.init(platform: .surfaceless, reason: reason)])
        let device = try #require(choice.device)
        #expect(device.software == (ctx.softwareRasterizer != nil))
        #expect(choice.description == "device \(device.index) of \(device.count)\(device.software ? " (software)" : "")\(device.node.map { " \($0)" } ?? "") (surfaceless passed over: \(reason))")
    }

    @Test("the device platform forced draws what surfaceless draws")
    func deviceRenders() throws {
        let (frame, _) = try decodeFrame(5, of: try Fixtures.path("counter.mp4"))
        let device = try GLRenderer(context: try EGLDisplayContext(options: .init(headlessPlatforms: [.device])))
        #expect(device.context.platform == .device)
        let a = try device.render(.frame(frame))
        let b = try GLRenderer().render(.frame(frame))
        #expect(a.bytes == b.bytes)
        #expect(frameCode(a) == 5)
        #expect(device.readbacks == 1)
    }

    @Test("no platform opens: one error naming each platform's failure; a forced one throws its own")
    func allFail() throws {
        do {
            _ = try EGLDisplayContext(options: .init(hiddenExtensions: ["EGL_MESA_platform_surfaceless", "EGL_EXT_platform_device"],
                                                     headlessPlatforms: [.surfaceless, .device]))
            Issue.record("opened with both platforms hidden")
        } catch let RenderError.eglUnavailable(why) {
            #expect(why == "no headless EGL platform opened (surfaceless: EGL_MESA_platform_surfaceless is missing (needed for the surfaceless EGL platform); device: EGL_EXT_platform_device is missing (needed for the EGL device platform))")
        }
        #expect(throws: RenderError.missingExtension("EGL_EXT_device_enumeration", neededFor: "the EGL device platform")) {
            try EGLDisplayContext(options: .init(hiddenExtensions: ["EGL_EXT_device_enumeration"], headlessPlatforms: [.device]))
        }
    }

    @Test("an offscreen render target is drawn into without readback, and read only when asked")
    func offscreenTarget() throws {
        let (frame, _) = try decodeFrame(7, of: try Fixtures.path("counter.mp4"))
        let gl = try GLRenderer()
        let target = try gl.makeTarget(width: frame.width, height: frame.height)
        try gl.render(.frame(frame), as: Composition(), into: target)
        #expect(gl.readbacks == 0)
        let image = try gl.read(target)
        #expect(gl.readbacks == 1)
        #expect(image.bytes == (try gl.render(.frame(frame))).bytes)
        #expect(frameCode(image) == 7)
        #expect(throws: RenderError.self) { try gl.makeTarget(width: 0, height: 10) }
    }
}
