import ArgumentParser
import ScanoutMedia
import ScanoutRender

/// Hidden checks that need real hardware or a real driver (run in the vkms guest by tools/vm).
struct Selftest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "selftest",
        abstract: "Checks against a real device (for tools/vm).",
        shouldDisplay: false,
        subcommands: [SelftestDMABuf.self]
    )
}

/// `scanout selftest dmabuf INPUT --frames 0,5,12`: on the GBM EGL display of a DRM device,
/// renders each chosen frame by texture upload and through GBM buffers exported as DMA-BUFs and
/// imported one EGLImage per plane, and prints the largest channel difference between the two.
struct SelftestDMABuf: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dmabuf",
        abstract: "Render frames by texture upload and by DMA-BUF import from GBM buffers; compare.",
        shouldDisplay: false
    )

    @Argument(help: "File path or URL.") var input: String
    @Option(help: "Frame indices to compare, comma-separated.") var frames: String = "0"
    @Option(help: "DRM device node.") var device: String = "/dev/dri/card0"
    @Option(help: "Largest channel difference allowed.") var tolerance: Int = 1

    func run() throws {
        FFmpegLog.install(printing: .quiet)
        try runReporting {
            let wanted = try frames.split(separator: ",").map { s -> Int in
                guard let n = Int(s.trimmingCharacters(in: " ")), n >= 0 else { throw ValidationError("--frames: bad index '\(s)'") }
                return n
            }
            guard let last = wanted.max() else { throw ValidationError("--frames: no index") }
            // The device first: without it nothing else matters.
            let gbm = try GBMDevice(path: device)
            let context = try EGLDisplayContext(gbmDevice: gbm)
            let renderer = try GLRenderer(context: context)
            let modifiers = context.hasEGLExtension("EGL_EXT_image_dma_buf_import_modifiers")
            print("# \(device): GBM backend \(gbm.backendName), EGL \(context.eglVersion) \(context.eglVendor), \(context.glRenderer); dma_buf_import: \(context.hasEGLExtension("EGL_EXT_image_dma_buf_import") ? "yes" : "no"), modifiers: \(modifiers ? "yes" : "no")")
            let reader = try FrameReader(input: input)
            let frame = VideoFrame()
            var index = 0
            var worst = 0
            var seen = Set<Int>()
            while index <= last, try reader.next(into: frame) {
                defer { index += 1 }
                guard wanted.contains(index) else { continue }
                seen.insert(index)
                let gbmFrame = try GBMFrame(device: gbm, frame: frame)
                let source = gbmFrame.source
                let uploaded = try renderer.render(source)
                let imported = try renderer.render(gbmFrame.dmabuf, colorSpace: source.colorSpace, colorRange: source.colorRange,
                                                   sampleAspectRatio: source.sampleAspectRatio)
                guard uploaded.width == imported.width, uploaded.height == imported.height, uploaded.bytes.count == imported.bytes.count else {
                    throw SelftestFailure("frame \(index): upload gave \(uploaded.width)x\(uploaded.height), DMA-BUF \(imported.width)x\(imported.height)")
                }
                var diff = 0
                for (a, b) in zip(uploaded.bytes, imported.bytes) { diff = max(diff, abs(Int(a) - Int(b))) }
                worst = max(worst, diff)
                let mod = gbmFrame.modifier.map { "0x" + String($0, radix: 16) } ?? "none"
                print("frame \(index): \(source.width)x\(source.height) \(frame.pixelFormat.name)->\(source.pixelFormat.name) pitches \(gbmFrame.dmabuf.planes.map { String($0.pitch) }.joined(separator: ",")) modifier \(mod): max diff \(diff) \(diff <= tolerance ? "ok" : "FAIL")")
            }
            let missing = Set(wanted).subtracting(seen).sorted()
            if !missing.isEmpty {
                throw SelftestFailure("\(input) has no frame \(missing.map(String.init).joined(separator: ", ")) (it has \(index))")
            }
            if worst > tolerance {
                throw SelftestFailure("DMA-BUF import differs from texture upload by \(worst) (allowed \(tolerance))")
            }
        }
    }
}

struct SelftestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

private extension Substring {
    func trimmingCharacters(in set: Character) -> Substring {
        var s = self
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return s
    }
}
