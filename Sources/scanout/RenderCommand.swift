import ArgumentParser
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPolicy
import ScanoutRender

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write exact frames as PNG, by number or by time.",
        discussion: """
        Frame N is the frame ffmpeg's select=eq(n\\,N) picks (counting from 0 in presentation order). \
        --at T picks the frame on screen T seconds after the first frame. Frames are found by seeking \
        to the keyframe before them and decoding forward, and checked by timestamp. Rotation \
        metadata is applied; the sample aspect ratio is stored in the PNG (pHYs) as ffmpeg does. \
        Of an HLS master playlist one variant is read (the first, as ffmpeg -map 0:v:0 does; \
        --variant or --max-height chooses another). PQ and HLG pictures are tone mapped to SDR \
        BT.709 (--tonemap: hable by default, the curve of the common zscale,tonemap=hable chain).
        """
    )

    @Argument(help: "File path or URL, - for standard input (may be left out when --token names the URL).") var input: String?
    @Option(help: "A screen layout (JSON: zones with their playlists): the composed screen at each --at time, one PNG each.") var layout: String?
    @Option(help: "Frame numbers and ranges, comma-separated (0,150,299 or 0-299).") var frames: String?
    @Option(help: "Keep every Nth frame of --frames (0-299 --every 30: 0, 30, ..., 270).") var every: Int = 1
    @Option(help: "Times in seconds from the first frame, comma-separated (7.3).") var at: String?
    @Option(help: "Directory for the PNGs (created if missing; default: the current one).") var out: String?
    @OptionGroup var oldOutput: DeprecatedOutputOption
    @Option(help: "Renderer: cpu (bit-exact reference), gl (GLES on EGL, llvmpipe included), auto (gl, else cpu).") var renderer: RendererOption = .cpu
    @Option(help: "Output size WxH (gl; default: the picture's natural size).") var size: String?
    @Option(help: "Scaling into --size: fit (letterbox), fill (crop), stretch, none (gl).") var scale: ScalingMode = .fit
    @Option(help: "Background colour RRGGBB around the picture (gl).") var background: String = "000000"
    @Flag(help: "16 bits per channel (rgb48) instead of 8.") var deep = false
    @Option(help: ArgumentHelp("PQ and HLG pictures to SDR BT.709 with this curve (FFmpeg's tonemap filter's, after zscale; bt2390: BT.2390's EETF), or none: the code values drawn as SDR's, ffmpeg's plain -pix_fmt rgb24.", valueName: "curve"))
    var tonemap: ToneMapOption = .curve(.hable)
    @Flag(help: "Keep the stored orientation (ignore rotation metadata).") var noAutorotate = false
    @OptionGroup var overlay: OverlayOptions
    @OptionGroup var subtitles: SubtitleOptions
    @OptionGroup var options: InputOptions
    @OptionGroup var variant: VariantOptions
    @OptionGroup var policy: PolicyOptions

    func validate() throws {
        if layout != nil {
            if input != nil || frames != nil { throw ValidationError("--layout takes --at times, no input and no --frames") }
            if at == nil { throw ValidationError("--layout needs --at") }
        }
        if frames == nil && at == nil { throw ValidationError("give --frames or --at") }
        guard every >= 1 else { throw ValidationError("--every must be 1 or more, not \(every)") }
        if every > 1 && frames == nil { throw ValidationError("--every needs --frames") }
        _ = try parseFrameList(frames)
        if renderer == .cpu, size == nil, overlay.image != nil || scale != .fit || background != "000000" {
            throw ValidationError("--scale, --background and --overlay need --size (the canvas) with --renderer cpu")
        }
        if deep && renderer != .cpu { throw ValidationError("--deep needs --renderer cpu (the GL renderer writes 8 bits)") }
        _ = try layoutOptions()
        if input == "-" && subtitles.asked { throw ValidationError("subtitles need an input that can be read twice; give the file itself") }
        try oldOutput.check(beside: out, newSpelling: "--out")
        try variant.check(with: options)
    }

    func run() throws {
        options.installLog()
        try runReporting {
            if let layout { return try renderLayout(layout) }
            // Before anything is opened or written: content whose policy denies capture is refused.
            let content = try policy.authorize(input: input, capture: .snapshot)
            if content.authorization.token != nil { StandardError.write(describePolicy(content.authorization) + "\n") }
            let input = mediaInput(content.input)
            _ = oldOutput.value(out, newSpelling: "--out", command: "render")
            let numbers = try parseFrameList(frames).enumerated().filter { $0.offset % every == 0 }.map(\.element)
            let times = try parseList(at, as: Double.self, option: "--at")
            var decoding = try options.decoder
            if renderer == .gl {
                // Hardware frames go to the GL renderer as DMA-BUFs: hw needs EGL's import.
                let egl = EGLProbe.headless()
                decoding.environment.dmaBufImport = egl.dmaBufImport ? .available
                    : .unavailable(egl.available ? "EGL_EXT_image_dma_buf_import is missing (\(egl.glesRenderer), \(egl.platform?.platform.rawValue ?? "headless") platform)" : egl.reason ?? "no EGL")
            }
            var requests: [RenderRequest] = numbers.map { RenderRequest(number: $0, name: "frame-\(pad6($0)).png") }
            if input == standardInput {
                guard times.isEmpty else { throw RenderInputError.timesNeedIndex }
                try renderForward(input: input, requests: requests, decoding: decoding)
                return
            }
            let seeker = try FrameSeeker(input: input, demuxerOptions: variant.demuxer(options), decoderOptions: decoding)
            variant.announce(seeker.reader.demuxer, quiet: options.quiet)
            for t in times {
                let n = try seeker.frameNumber(at: t)
                requests.append(RenderRequest(number: n, name: "at-\(t)s-frame-\(pad6(n)).png"))
            }
            let video = seeker.reader.video
            // --deep (16 bits, no compositor) leaves out the default or forced track nobody asked for.
            var selection = subtitles.selection
            if deep && !subtitles.asked { selection.enabled = false }
            let script = try selection.script(input: input, tracks: seeker.reader.demuxer.tracks,
                                                        videoStart: Double(video.startTime ?? 0) * video.timeBase.doubleValue,
                                                        timeoutSeconds: options.demuxer.timeoutSeconds)
            let text = try script.map { s -> (SubtitleRenderer, Rational) in
                let r = try SubtitleRenderer(script: s)
                r.delay = subtitles.delay
                r.safeMargin = selection.margin
                return (r, video.timeBase)
            }
            try renderAll(requests, orientation: noAutorotate ? Orientation.identity : video.orientation, subtitles: text) {
                try seeker.frame($0)
            }
            if let damage = seeker.reader.damage() { throw damage }
        }
    }
}

extension Render {
    /// Renders the frames `requests` name, each got from `frame(number)`, and writes each as PNG
    /// in --out with one line on stdout. In stream order, so that frames of one GOP are decoded
    /// once; the GL renderer hands images back a few frames later (its readback is pipelined),
    /// in the same order.
    func renderAll(_ requests: [RenderRequest], orientation: Orientation, subtitles: (SubtitleRenderer, Rational)? = nil,
                   frame: (Int) throws -> VideoFrame) throws {
        let out = directory
        try makeDirectory(out)
        let png = PNGEncoder()
        let rendering = try makeRenderer(orientation: orientation, subtitles: subtitles)
        let progress = ProgressLine(quiet: options.quiet, terminalOnly: true)
        let start = ClockTime.now()
        var written = 0
        defer { progress.finish() }
        func write(_ done: [(RenderRequest, RGBImage)]) throws {
            for (r, image) in done {
                let path = out.hasSuffix("/") ? out + r.name : out + "/" + r.name
                try png.write(image, to: path)
                print("\(path)  frame \(r.number)  pts \(r.pts)  \(image.width)x\(image.height)")
                written += 1
                progress.update(frameProgressText(written, of: requests.count, since: start))
            }
        }
        for var r in requests.sorted(by: { $0.number < $1.number }) {
            let f = try frame(r.number)
            r.pts = f.pts.map(String.init) ?? "none"
            try write(try rendering.submit(f, r))
        }
        try write(try rendering.finish())
    }

    /// Frames of standard input, which cannot seek back: decoded forward from the first frame
    /// (frame N is the Nth decoded, in presentation order), each one asked for rendered as it comes.
    func renderForward(input: String, requests: [RenderRequest], decoding: DecoderOptions) throws {
        let reader = try FrameReader(input: input, demuxerOptions: variant.demuxer(options), decoderOptions: decoding)
        variant.announce(reader.demuxer, quiet: options.quiet)
        let last = requests.map(\.number).max() ?? -1
        var decoded = -1
        var current = VideoFrame()
        try renderAll(requests, orientation: noAutorotate ? Orientation.identity : reader.video.orientation) { wanted in
            while decoded < wanted {
                // A frame of its own each time: the GL renderer may still hold the one before.
                let next = VideoFrame()
                guard try reader.next(into: next) else {
                    throw MediaError.frameOutOfRange(input: input, requested: last, frameCount: decoded + 1)
                }
                current = next
                decoded += 1
            }
            return current
        }
        if let damage = reader.damage() { throw damage }
    }

    /// Where the PNGs go: --out, or its old spelling --output, else the current directory.
    var directory: String { out ?? oldOutput.legacy ?? "." }

    /// Size, scaling and background from the options.
    func layoutOptions() throws -> (size: (Int, Int)?, scaling: ScalingMode, background: RGBColor) {
        var wh: (Int, Int)? = nil
        if let size {
            let parts = size.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else {
                throw ValidationError("--size: WxH, e.g. 1280x720")
            }
            wh = (w, h)
        }
        guard let bg = RGBColor(hex: background) else { throw ValidationError("--background: RRGGBB, e.g. 000000") }
        return (wh, scale, bg)
    }

    /// The renderer the options ask for. `auto` tries GL and falls back to the CPU, saying why on
    /// one stderr line.
    /// With `subtitles` (a renderer and the video's time base), each frame gets the subtitle
    /// layer of its time; the CPU then draws through the compositor, at the picture's natural size
    /// when no --size is given.
    func makeRenderer(orientation: Orientation, subtitles: (SubtitleRenderer, Rational)? = nil) throws -> FrameRendering {
        /// `c` with the subtitle layer of `frame`'s time.
        func text(_ frame: VideoFrame, _ c: Composition, _ size: (Int, Int)? = nil) -> Composition {
            var c = c
            if let (subs, tb) = subtitles, let pts = frame.pts {
                c.subtitles = subs.layer(at: Double(pts) * tb.doubleValue, for: frame, in: c, outputWidth: size?.0, outputHeight: size?.1)
            }
            return c
        }
        if renderer != .cpu {
            do {
                return try glRendering(orientation: orientation, text: text)
            } catch let e as RenderError where renderer == .auto {
                StandardError.write("renderer: cpu (gl unavailable: \(e))\n")
            }
        }
        // A canvas size, scaling, background or overlay: the CPU compositor (what a KMS screen
        // driven by the CPU shows). Otherwise the bit-exact renderer at the picture's own size.
        let layout = try layoutOptions()
        if let size = layout.size {
            guard !deep else { throw ValidationError("--deep renders at the picture's own size; leave out --size") }
            var composition = Composition(outputWidth: size.0, outputHeight: size.1, scaling: layout.scaling, orientation: orientation,
                                          background: layout.background, overlay: try overlay.load())
            composition.toneMapping = tonemap.mapping
            let composer = CPUCompositor()
            return FrameRendering { try composer.compose($0, as: text($0, composition, size), width: size.0, height: size.1) }
        }
        if subtitles != nil {
            guard !deep else { throw ValidationError("--deep draws no subtitles; leave out --sub-file, --sid and --slang, or add --no-sub") }
            // At 1:1 the compositor's picture is the CPU renderer's, byte for byte.
            let composer = CPUCompositor()
            var composition = Composition(orientation: orientation, applySampleAspectRatio: false)
            composition.toneMapping = tonemap.mapping
            return FrameRendering { frame in
                let size = Composition.naturalSize(width: frame.width, height: frame.height, sampleAspectRatio: Rational(1, 1), orientation: orientation)
                return try composer.compose(frame, as: text(frame, composition, size), width: size.width, height: size.height)
            }
        }
        if overlay.image != nil { throw ValidationError("--overlay needs --size (the canvas it is drawn on) with --renderer cpu") }
        let cpu = CPURenderer()
        let rgbLayout: RGBImage.Layout = deep ? .rgb48be : .rgb24
        let mapping = tonemap.mapping
        return FrameRendering { try cpu.render($0, orientation: orientation, toneMapping: mapping, layout: rgbLayout) }
    }

    /// The GLES renderer, its readback pipelined: each frame composed with `text`'s subtitle
    /// layer. A hardware frame is imported as DMA-BUFs; should the import be refused mid-stream,
    /// its CPU copy (every hardware frame has one) is uploaded instead.
    private func glRendering(orientation: Orientation, text: @escaping (VideoFrame, Composition, (Int, Int)?) -> Composition) throws -> FrameRendering {
        let layout = try layoutOptions()
        var composition = Composition(outputWidth: layout.size?.0, outputHeight: layout.size?.1, scaling: layout.scaling,
                                      orientation: orientation, background: layout.background, overlay: try overlay.load())
        // HDR frames are tone mapped by the renderer (in its shader where it can).
        composition.toneMapping = tonemap.mapping
        let gl = try GLRenderer()
        if renderer == .auto { StandardError.write("renderer: gl (\(gl.context.glRenderer))\n") }
        let pipeline = try GLReadbackPipeline<RenderRequest>(renderer: gl)
        var importWorks = true
        return FrameRendering(submit: { frame, request in
            let c = text(frame, composition, nil)
            if importWorks, let surface = frame.surface {
                do {
                    return try pipeline.submit(.surface(surface, taggedLike: frame), as: c, tag: request).map { ($0.tag, $0.image) }
                } catch let e as RenderError {
                    importWorks = false
                    StandardError.write("scanout: DMA-BUF import refused (\(e)); uploading frames from CPU memory instead\n")
                }
            }
            return try pipeline.submit(.frame(frame), as: c, tag: request).map { ($0.tag, $0.image) }
        }, finish: { try pipeline.finish().map { ($0.tag, $0.image) } })
    }
}

/// Why a render cannot be done from standard input.
enum RenderInputError: Error, CustomStringConvertible {
    case timesNeedIndex

    var description: String {
        switch self {
        case .timesNeedIndex:
            "-: --at needs the input's index (the time of every frame), and standard input cannot seek back to it; give --frames N, or the file itself"
        }
    }
}

/// One frame `scanout render` writes: its number, file name and (once decoded) timestamp.
struct RenderRequest {
    var number: Int
    var name: String
    var pts = "none"
}

/// Frames to images. `submit` returns the images that are ready, which may be those of earlier
/// frames (the GL readback is pipelined); `finish` returns the rest. Both in submission order.
struct FrameRendering {
    var submit: (VideoFrame, RenderRequest) throws -> [(RenderRequest, RGBImage)]
    var finish: () throws -> [(RenderRequest, RGBImage)]

    init(submit: @escaping (VideoFrame, RenderRequest) throws -> [(RenderRequest, RGBImage)],
         finish: @escaping () throws -> [(RenderRequest, RGBImage)]) {
        self.submit = submit
        self.finish = finish
    }

    /// A renderer that hands each image back at once.
    init(_ render: @escaping (VideoFrame) throws -> RGBImage) {
        submit = { frame, request in [(request, try render(frame))] }
        finish = { [] }
    }
}

/// `--frames`: numbers and inclusive ranges, comma-separated ("0,150,299", "0-299", "0-9,20").
func parseFrameList(_ text: String?) throws -> [Int] {
    guard let text else { return [] }
    return try text.split(separator: ",").flatMap { item -> [Int] in
        let bounds = item.split(separator: "-", omittingEmptySubsequences: false).map { Int(String($0).trimmingSpaces) }
        switch bounds.count {
        case 1: if let n = bounds[0] { return [n] }
        case 2: if let a = bounds[0], let b = bounds[1], a <= b { return Array(a...b) }
        default: break
        }
        throw ValidationError("--frames: '\(item)' is neither a frame number nor a range like 0-299")
    }
}

func parseList<T: LosslessStringConvertible>(_ text: String?, as: T.Type, option: String) throws -> [T] {
    guard let text else { return [] }
    return try text.split(separator: ",").map {
        guard let v = T(String($0).trimmingSpaces) else { throw ValidationError("\(option): '\($0)' is not a number") }
        return v
    }
}

extension String {
    var trimmingSpaces: String {
        String(self.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
