import ArgumentParser
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutRender
import ScanoutDisplay

/// Hidden checks that need real hardware or a real driver (run in the vkms guest by tools/vm).
struct Selftest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "selftest",
        abstract: "Checks against a real device (for tools/vm).",
        shouldDisplay: false,
        subcommands: [SelftestDMABuf.self, SelftestCaptures.self, SelftestNative.self]
    )
}

/// `scanout selftest dmabuf INPUT --frames 0,5,12`: on the GBM EGL display of a DRM device,
/// renders each chosen frame by texture upload and through GBM buffers exported as DMA-BUFs and
/// imported one EGLImage per plane, and prints the largest channel difference between the two.
/// `--refuse R8,GR88` makes the importer treat those formats as refused by the driver, which
/// sends the frames down the single-image fallback (one NV12 EGLImage sampled as
/// GL_TEXTURE_EXTERNAL_OES): those frames must draw, and their difference is printed but not
/// judged (Mesa 22.3's llvmpipe samples a whole NV12 image wrongly; real GPUs do not).
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
    @Option(help: "DRM formats to treat as refused by the driver, comma-separated (e.g. R8,GR88).") var refuse: String = ""
    @Option(help: "Treat the context as no newer than this GLES version (2: the GLES 2 path).") var gles: Int?

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
            let context = try EGLDisplayContext(gbmDevice: gbm, options: .init(glesVersionLimit: gles))
            let renderer = try GLRenderer(context: context)
            renderer.importer.refusedDMABufFormats = Set(refuse.split(separator: ",").map { FourCC.code(String($0)) })
            let modifiers = context.hasEGLExtension("EGL_EXT_image_dma_buf_import_modifiers")
            print("# \(device): GBM backend \(gbm.backendName), EGL \(context.eglVersion) \(context.eglVendor), \(context.glRenderer), \(renderer.dialect.rawValue); dma_buf_import: \(context.hasEGLExtension("EGL_EXT_image_dma_buf_import") ? "yes" : "no"), modifiers: \(modifiers ? "yes" : "no")")
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
                let uploaded = try renderer.render(.frame(source))
                let imported = try renderer.render(.dmabuf(gbmFrame.dmabuf, colorSpace: source.colorSpace, colorRange: source.colorRange,
                                                           sampleAspectRatio: source.sampleAspectRatio))
                guard uploaded.width == imported.width, uploaded.height == imported.height, uploaded.bytes.count == imported.bytes.count else {
                    throw SelftestFailure("frame \(index): upload gave \(uploaded.width)x\(uploaded.height), DMA-BUF \(imported.width)x\(imported.height)")
                }
                var diff = 0
                for (a, b) in zip(uploaded.bytes, imported.bytes) { diff = max(diff, abs(Int(a) - Int(b))) }
                let mod = gbmFrame.modifier.map { "0x" + String($0, radix: 16) } ?? "none"
                let described = "frame \(index): \(source.width)x\(source.height) \(frame.pixelFormat.name)->\(source.pixelFormat.name) pitches \(gbmFrame.dmabuf.planes.map { String($0.pitch) }.joined(separator: ",")) modifier \(mod)"
                if renderer.lastDMABufSingleImage {
                    print("\(described): one external image, drawn ok (max diff \(diff) against the upload, not judged)")
                    continue
                }
                worst = max(worst, diff)
                print("\(described): max diff \(diff) \(diff <= tolerance ? "ok" : "FAIL")")
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

/// `scanout selftest captures DIR --input CLIP --size WxH --renderer cpu|gl`: checks the writeback
/// captures `scanout play --capture DIR` wrote. Each capture's frame number is read from the
/// clip's binary code band (where the composition put it), and its pixels are compared with the
/// headless render of that frame at the screen's size by the same renderer. Prints one line per
/// capture and a verdict; exits 1 unless every frame of the clip appears exactly once, in order,
/// within the tolerance.
struct SelftestCaptures: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "captures",
        abstract: "Check writeback captures against headless renders of the same frames.",
        shouldDisplay: false
    )

    @Argument(help: "Directory of capture-NNNNNN.png files.") var directory: String
    @Option(help: "The clip that was played.") var input: String
    @Option(help: "Screen size WxH.") var size: String
    @Option(help: "Renderer used on the screen: cpu or gl.") var renderer: String = "cpu"
    @Option(help: "Scaling mode used.") var scale: String = "fit"
    @Option(help: "Largest channel difference allowed.") var tolerance: Int = 0

    func run() throws {
        FFmpegLog.install(printing: .quiet)
        try runReporting {
            let wh = size.split(separator: "x").compactMap { Int($0) }
            guard wh.count == 2, let scaling = ScalingMode(rawValue: scale) else { throw ValidationError("--size WxH, --scale fit|fill|stretch|none") }
            let (W, H) = (wh[0], wh[1])
            // The reference renders, frame by frame, in decode order.
            let reader = try FrameReader(input: input)
            let composition = Composition(outputWidth: W, outputHeight: H, scaling: scaling)
            let cpu = CPUCompositor()
            let gl = renderer == "gl" ? try GLRenderer() : nil
            var references: [RGBImage] = []
            var rect = PixelRect(x: 0, y: 0, width: W, height: H)
            var source = (w: 1, h: 1)
            let frame = VideoFrame()
            while try reader.next(into: frame) {
                references.append(try gl?.render(.frame(frame), as: composition) ?? cpu.compose(frame, as: composition, width: W, height: H))
                source = (frame.width, frame.height)
                rect = Composition.destination(sourceWidth: frame.width, sourceHeight: frame.height, sampleAspectRatio: frame.sampleAspectRatio,
                                              orientation: .identity, outputWidth: W, outputHeight: H, mode: scaling)
            }
            let names = try listDirectory(directory).filter { $0.hasPrefix("capture-") && $0.hasSuffix(".png") }.sorted()
            var seen: [Int] = []
            var worst = 0
            for name in names {
                let rgba = try ImageReader.readRGBA(path: directory + "/" + name)
                var rgb = [UInt8](repeating: 0, count: rgba.width * rgba.height * 3)
                for i in 0..<(rgba.width * rgba.height) { for c in 0..<3 { rgb[3 * i + c] = rgba.bytes[4 * i + c] } }
                let image = RGBImage(width: rgba.width, height: rgba.height, bytes: rgb)
                var code = 0
                for bit in 0..<10 {
                    let sx = bit * 32 + 16
                    guard sx < source.w else { break }
                    let x = rect.x + sx * rect.width / source.w, y = rect.y + 16 * rect.height / source.h
                    guard x >= 0, x < W, y >= 0, y < H else { continue }
                    let p = image.pixel(x: x, y: y)
                    if (Int(p.r) + Int(p.g) + Int(p.b)) / 3 > 128 { code |= 1 << bit }
                }
                seen.append(code)
                guard code < references.count, let diff = image.maxChannelDifference(references[code]) else {
                    print("\(name): frame \(code): no reference (size \(image.width)x\(image.height))")
                    worst = Int.max
                    continue
                }
                worst = max(worst, diff)
                print("\(name): frame \(code) max diff \(diff)\(diff <= tolerance ? " ok" : " FAIL")")
            }
            let inOrder = seen == Array(0..<references.count)
            print("captures: \(names.count) of \(references.count) frames; each once in order: \(inOrder ? "yes" : "no"); max diff \(worst == Int.max ? "-" : String(worst))")
            guard inOrder && worst <= tolerance else {
                throw ExitCode(1)
            }
        }
    }
}

/// `scanout selftest native INPUT --format xrgb|nv12 --capture DIR`: the native plane path on a
/// real driver. Each decoded frame is put into GBM buffers and exported as a DMA-BUF (XRGB8888:
/// one buffer; NV12: R8 + GR88 buffers, one per plane) and handed to `KMSDisplay.presentNative`,
/// which puts it on a plane when the `TEST_ONLY` commit accepts it and composites the decoded
/// frame otherwise; every frame is captured through the writeback connector. Prints the counters.
struct SelftestNative: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "native",
        abstract: "Show frames as DMA-BUFs on a KMS plane (or the fallback), capturing each.",
        shouldDisplay: false
    )

    @Argument(help: "File path or URL.") var input: String
    @Option(help: "DMA-BUF format: xrgb or nv12.") var format: String = "xrgb"
    @Option(help: "DRM device node.") var device: String = "/dev/dri/card0"
    @Option(help: "Mode, WxH@R.") var mode: String?
    @Option(help: "Directory for capture-NNNNNN.png.") var capture: String

    func run() throws {
        FFmpegLog.install(printing: .quiet)
        try runReporting {
            guard ["xrgb", "nv12"].contains(format) else { throw ValidationError("--format: xrgb or nv12") }
            let kms = try KMSDisplay.open(devicePath: device, renderer: .cpu, options: KMSDisplay.Options(mode: mode, capture: true))
            defer { kms.restore() }
            try makeDirectory(capture)
            let png = PNGEncoder()
            var writeError: Error?
            kms.onCapture = { i, image in
                do { try png.write(image, to: capture + "/capture-" + pad6(i) + ".png") } catch { writeError = error }
            }
            let gbm = try GBMDevice(path: device)
            let reader = try FrameReader(input: input)
            let frame = VideoFrame()
            let scaler = Scaler()
            let packed = VideoFrame()
            var index = 0
            while try reader.next(into: frame) {
                defer { index += 1 }
                let path: KMSFramePath
                if format == "xrgb" {
                    try scaler.convert(frame, to: .bgr0, into: packed)
                    let bo = try GBMBuffer(device: gbm, width: frame.width, height: frame.height, format: FourCC.xrgb8888, usage: .cpu)
                    try bo.withMappedPixels(write: true) { base, stride in
                        for y in 0..<frame.height {
                            (base + y * stride).copyMemory(from: packed.planeData(0)! + y * packed.lineSize(0), byteCount: 4 * frame.width)
                        }
                    }
                    path = try kms.presentNative(bo.dmabuf, keepAlive: bo, orientation: .identity, fallback: { frame })
                } else {
                    let buffers = try GBMFrame(device: gbm, frame: frame)
                    path = try kms.presentNative(buffers.dmabuf, keepAlive: buffers, orientation: .identity, fallback: { frame })
                }
                if let writeError { throw writeError }
                print("frame \(index): \(path.rawValue)\(path == .composited ? " (\(kms.lastNativeRejection ?? "?"))" : "")")
            }
            let c = kms.counters
            print("native: \(c.native) native, \(c.nativeRejected) refused, \(c.composited) composited, \(c.captures) captures")
        }
    }
}
