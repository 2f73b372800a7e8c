import CASS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
#if canImport(Glibc)
import Glibc
#endif

/// libass's message callback: its levels (0 fatal, 1 error, 2 warning, 4 info, 6 verbose, 7
/// debug) printed as FFmpeg's lines of the same level are (`FFmpegLog`).
private func assMessage(level: Int32, format: UnsafePointer<CChar>?, args: CVaListPointer?) {
    let mapped: FFmpegLog.Level = switch level {
    case ...0: .fatal
    case 1: .error
    case 2, 3: .warning
    case 4, 5: .info
    case 6: .verbose
    default: .debug
    }
    guard let format, let args, FFmpegLog.prints(mapped) else { return }
    var text = [CChar](repeating: 0, count: 1024)
    _ = vsnprintf(&text, text.count, format, args)
    let length = text.firstIndex(of: 0) ?? text.count
    FFmpegLog.write(String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self), from: "libass", level: mapped)
}

/// Draws subtitle events with libass into an RGBA layer the size of the output, which both
/// renderers blend over the picture as they blend the logo (`Composition.subtitles`).
///
/// Layout, the same for every renderer: libass's frame is the output (less the safe margin on
/// each side), its video rectangle the part of the picture's rectangle inside it
/// (`Composition.destination`: fit, fill, rotation), so text sits on the visible picture, scales
/// with the output and stays inside the safe area; the storage size is the picture's upright
/// size. Fonts come from fontconfig, DejaVu Sans when a style's font is missing.
///
/// Owns an `ASS_Library`, an `ASS_Renderer` and an `ASS_Track`, freed once in `deinit` (track,
/// renderer, library). Not thread-safe: one owner at a time (libass renderers are not shared).
public final class SubtitleRenderer {
    private let library: OpaquePointer
    private let renderer: OpaquePointer
    private let track: UnsafeMutablePointer<ASS_Track>
    /// Seconds added to every event's times (positive: later).
    public var delay: Double = 0
    /// The time base of the pictures' timestamps (`layer(for:...)` reads a frame's time from them).
    public var videoTimeBase = Rational(1, 1000)
    /// False: no layer at all (the API's `enabled`), the events kept.
    public var enabled = true
    /// What is left free on each side of the output (`.fraction(0.05)`: 5 % from every edge).
    public var safeMargin: SubtitleMargin = .fraction(0)
    private var last: (key: LayoutKey, layer: Overlay?)?

    private struct LayoutKey: Equatable {
        var width: Int, height: Int, picture: PixelRect, storage: Int, safe: SubtitleMargin
    }

    /// A renderer for the track whose ASS header is `header` (styles, `PlayResX`); its events come
    /// from `add`.
    public init(header: String) throws {
        guard let lib = ass_library_init() else { throw RenderError.subtitles("ass_library_init failed (out of memory?)") }
        // Before the renderer, which reports its rasteriser and shaper: libass prints those, its
        // version and every font substitution to stderr by default. Its lines follow FFmpeg's
        // log level instead (nothing unless --verbose).
        ass_set_message_cb(lib, { level, format, args, _ in assMessage(level: level, format: format, args: args) }, nil)
        guard let r = ass_renderer_init(lib) else {
            ass_library_done(lib)
            throw RenderError.subtitles("ass_renderer_init failed: libass has no font rasteriser (FreeType)")
        }
        guard let t = ass_new_track(lib) else {
            ass_renderer_done(r); ass_library_done(lib)
            throw RenderError.subtitles("ass_new_track failed (out of memory?)")
        }
        library = lib; renderer = r; track = t
        ass_set_fonts(r, nil, "DejaVu Sans", Int32(ASS_FONTPROVIDER_AUTODETECT.rawValue), nil, 1)
        ass_set_use_margins(r, 0)
        var bytes = Array(header.utf8).map { CChar(bitPattern: $0) }
        if !bytes.isEmpty { ass_process_codec_private(t, &bytes, Int32(bytes.count)) }
    }

    /// A renderer with every event of `script`.
    public convenience init(script: SubtitleScript) throws {
        try self.init(header: script.header)
        for e in script.events { add(e) }
    }

    deinit {
        ass_free_track(track)
        ass_renderer_done(renderer)
        ass_library_done(library)
    }

    /// The events added, by time and text (the line less its ReadOrder).
    private var added: Set<EventKey> = []

    private struct EventKey: Hashable {
        var start: Int64, duration: Int64, text: Substring
    }

    /// Adds one event; an event already added (same times and text) is ignored. libass keeps
    /// each ReadOrder once, but a packet decoded again (after a seek, or by a second reader)
    /// gets a new ReadOrder from its decoder, so the check is on the times and the text.
    public func add(_ event: SubtitleEvent) {
        let start = Int64((event.start * 1000).rounded()), duration = Int64((event.duration * 1000).rounded())
        let text = event.line.firstIndex(of: ",").map { event.line[event.line.index(after: $0)...] } ?? Substring(event.line)
        guard added.insert(EventKey(start: start, duration: duration, text: text)).inserted else { return }
        var bytes = Array(event.line.utf8).map { CChar(bitPattern: $0) }
        ass_process_chunk(track, &bytes, Int32(bytes.count), start, duration)
        last = nil
    }

    /// Events held.
    public var eventCount: Int { Int(track.pointee.n_events) }

    /// The layer to draw at media time `time` (seconds, the events' clock) on a
    /// `outputWidth`×`outputHeight` output whose picture lies at `picture`, upright size
    /// `pictureWidth`×`pictureHeight`; nil when no text is shown then. Unchanged layers are the
    /// same value (so that a renderer uploads it once).
    public func layer(at time: Double, outputWidth W: Int, outputHeight H: Int, picture: PixelRect,
                      pictureWidth: Int, pictureHeight: Int) -> Overlay? {
        let (mx, my) = safeMargin.pixels(width: W, height: H)
        let fw = W - 2 * mx, fh = H - 2 * my
        guard fw > 0, fh > 0, picture.width > 0, picture.height > 0 else { return nil }
        let key = LayoutKey(width: W, height: H, picture: picture, storage: pictureWidth << 32 | pictureHeight, safe: safeMargin)
        // The part of the picture inside the frame (all of it, unless `fill` crops it or the safe
        // margin cuts into it): the rectangle libass places text in.
        let x0 = max(picture.x - mx, 0), y0 = max(picture.y - my, 0)
        let x1 = min(picture.x + picture.width - mx, fw), y1 = min(picture.y + picture.height - my, fh)
        guard x1 > x0, y1 > y0 else { return nil }
        if last?.key != key {
            ass_set_frame_size(renderer, Int32(fw), Int32(fh))
            ass_set_storage_size(renderer, Int32(pictureWidth), Int32(pictureHeight))
            ass_set_margins(renderer, Int32(y0), Int32(fh - y1), Int32(x0), Int32(fw - x1))
        }
        var changed: Int32 = 0
        // To the nearest millisecond (libass's unit): 1.025 − 0.5 must be 525, not 524.
        let now = Int64(((time - delay) * 1000).rounded())
        let images = ass_render_frame(renderer, track, now, &changed)
        if let last, last.key == key, changed == 0 { return last.layer }
        let layer = images.map { Self.flatten($0, width: fw, height: fh) }.flatMap { image in
            image.map { Overlay(image: $0.image, x: $0.x + mx, y: $0.y + my) }
        }
        last = (key, layer)
        return layer
    }

    /// The images of one frame blended, in list order (back to front), into one straight-alpha
    /// RGBA image covering their union; nil when all are empty.
    static func flatten(_ first: UnsafeMutablePointer<ASS_Image>, width W: Int, height H: Int) -> (image: RGBAImage, x: Int, y: Int)? {
        var x0 = W, y0 = H, x1 = 0, y1 = 0
        var p: UnsafeMutablePointer<ASS_Image>? = first
        while let i = p?.pointee {
            if i.w > 0, i.h > 0 {
                x0 = min(x0, max(0, Int(i.dst_x))); y0 = min(y0, max(0, Int(i.dst_y)))
                x1 = max(x1, min(W, Int(i.dst_x + i.w))); y1 = max(y1, min(H, Int(i.dst_y + i.h)))
            }
            p = i.next
        }
        guard x1 > x0, y1 > y0 else { return nil }
        let w = x1 - x0, h = y1 - y0
        // Premultiplied accumulation in 1/255² steps, then divided back to straight alpha.
        var acc = [UInt32](repeating: 0, count: 4 * w * h)
        p = first
        while let i = p?.pointee {
            let r = UInt32(i.color >> 24), g = UInt32(i.color >> 16 & 0xff), b = UInt32(i.color >> 8 & 0xff)
            let opacity = 255 - UInt32(i.color & 0xff)
            for row in 0..<Int(i.h) {
                let y = Int(i.dst_y) + row
                guard y >= y0, y < y1 else { continue }
                for col in 0..<Int(i.w) {
                    let x = Int(i.dst_x) + col
                    guard x >= x0, x < x1 else { continue }
                    let a = UInt32(i.bitmap[row * Int(i.stride) + col]) * opacity   // 0...255²
                    guard a > 0 else { continue }
                    let d = 4 * ((y - y0) * w + (x - x0))
                    let keep = 65025 - a
                    acc[d] = (r * a + acc[d] * keep / 65025)
                    acc[d + 1] = (g * a + acc[d + 1] * keep / 65025)
                    acc[d + 2] = (b * a + acc[d + 2] * keep / 65025)
                    acc[d + 3] = a + acc[d + 3] * keep / 65025
                }
            }
            p = i.next
        }
        var bytes = [UInt8](repeating: 0, count: 4 * w * h)
        for k in stride(from: 0, to: bytes.count, by: 4) {
            let a = acc[k + 3]
            guard a > 0 else { continue }
            bytes[k] = UInt8(min(255, (acc[k] + a / 2) / a))
            bytes[k + 1] = UInt8(min(255, (acc[k + 1] + a / 2) / a))
            bytes[k + 2] = UInt8(min(255, (acc[k + 2] + a / 2) / a))
            bytes[k + 3] = UInt8((a + 127) / 255)
        }
        return (RGBAImage(width: w, height: h, bytes: bytes), x0, y0)
    }
}

extension SubtitleRenderer {
    /// The layer for `frame` drawn as `c` lays it out (its scaling, orientation and
    /// sample-aspect rule) on a `outputWidth`×`outputHeight` output (nil: the composition's size,
    /// else the picture's natural size), at media time `time`.
    public func layer(at time: Double, for frame: VideoFrame, in c: Composition,
                      outputWidth: Int? = nil, outputHeight: Int? = nil) -> Overlay? {
        let sar = frame.sampleAspectRatio.isValid && c.applySampleAspectRatio ? frame.sampleAspectRatio : Rational(1, 1)
        let natural = Composition.naturalSize(width: frame.width, height: frame.height, sampleAspectRatio: sar, orientation: c.orientation)
        let W = outputWidth ?? c.outputWidth ?? natural.width, H = outputHeight ?? c.outputHeight ?? natural.height
        let rect = Composition.destination(sourceWidth: frame.width, sourceHeight: frame.height, sampleAspectRatio: sar,
                                           orientation: c.orientation, outputWidth: W, outputHeight: H, mode: c.scaling)
        return layer(at: time, outputWidth: W, outputHeight: H, picture: rect, pictureWidth: natural.width, pictureHeight: natural.height)
    }

    /// The layer for `frame` at its own time (its timestamp in `videoTimeBase`); nil when the
    /// frame has none or the subtitles are off. What displays call as they draw.
    public func layer(for frame: VideoFrame, in c: Composition, outputWidth: Int? = nil, outputHeight: Int? = nil) -> Overlay? {
        guard enabled, let pts = frame.pts else { return nil }
        return layer(at: Double(pts) * videoTimeBase.doubleValue, for: frame, in: c, outputWidth: outputWidth, outputHeight: outputHeight)
    }

    /// `c` with this renderer's layer for `frame` as its subtitles (none when there is no text).
    public func composing(_ frame: VideoFrame, into c: Composition, outputWidth: Int? = nil, outputHeight: Int? = nil) -> Composition {
        var c = c
        c.subtitles = layer(for: frame, in: c, outputWidth: outputWidth, outputHeight: outputHeight)
        return c
    }
}
