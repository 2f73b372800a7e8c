import Foundation
import Testing
@testable import ScanoutRender
import ScanoutKMS
import ScanoutTestSupport

/// What of the GBM / DMA-BUF path can be checked without a DRM device. The path itself runs in
/// the vkms guest: tools/vm/test-dmabuf.sh (`scanout selftest dmabuf`).
@Suite("GBM platform and DMA-BUF self-test without a device")
struct GLDMABufTests {
    static let missing = "/nonexistent/dri/card9"

    @Test("a missing device node → deviceUnavailable naming it")
    func missingDevice() {
        #expect(throws: GBMError.deviceUnavailable(path: Self.missing, reason: "No such file or directory")) {
            try GBMDevice(path: Self.missing)
        }
        #expect(throws: RenderError.deviceUnavailable(path: Self.missing, reason: "No such file or directory")) {
            try EGLDisplayContext(gbmDevicePath: Self.missing)
        }
        #expect(RenderError.deviceUnavailable(path: Self.missing, reason: "No such file or directory").description
            == "DRM device \(Self.missing) unavailable: No such file or directory")
    }

    @Test("scanout selftest dmabuf on a missing device: one line naming it, status 1")
    func selftestMissingDevice() throws {
        let binary = Fixtures.packageRoot.appendingPathComponent(".build/debug/scanout").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            Issue.record("\(binary) not built; run `swift build` first")
            return
        }
        let input = try Fixtures.path("counter.mp4")
        let r = try Proc.run(binary, ["selftest", "dmabuf", input, "--frames", "0,5", "--device", Self.missing])
        #expect(r.status == 1)
        #expect(r.stdoutText.isEmpty)
        #expect(r.stderrText == "scanout: DRM device \(Self.missing) unavailable: No such file or directory\n")
    }

    @Test("selftest is hidden from the help")
    func hidden() throws {
        let binary = Fixtures.packageRoot.appendingPathComponent(".build/debug/scanout").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return }
        let r = try Proc.run(binary, ["--help"])
        #expect(!r.stdoutText.contains("selftest"))
    }
}
