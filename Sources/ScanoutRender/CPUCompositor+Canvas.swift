import Dispatch
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Several pictures on one canvas with the CPU: each zone drawn as a canvas of its own
/// (`compose(_:as:into:…)`, so a zone holds exactly what `scanout render --size` of its rectangle
/// draws), then placed, blended at its opacity where it is not opaque.
extension CPUCompositor {
    /// Draws `canvas` into XRGB8888 pixels of its output size at `pixels` (`stride` bytes per
    /// row): the background, each zone with `frames[i]` (nil: the zone's background and layers
    /// only), its border, then the canvas's overlays; all of it turned as `canvas.turn` says.
    package func compose(_ frames: [VideoFrame?], on canvas: Canvas, into pixels: UnsafeMutableRawPointer, stride: Int) throws {
        guard !canvas.turn.isIdentity else { return try composeUpright(frames, on: canvas, into: pixels, stride: stride) }
        let W = canvas.width, H = canvas.height
        guard W > 0, H > 0 else { throw RenderError.invalidSize("canvas \(W)x\(H)") }
        var upright = [UInt8](repeating: 0, count: 4 * W * H)
        try upright.withUnsafeMutableBytes { try composeUpright(frames, on: canvas, into: $0.baseAddress!, stride: 4 * W) }
        let out = canvas.outputSize
        guard stride >= 4 * out.width else { throw RenderError.invalidSize("output \(out.width)x\(out.height), stride \(stride)") }
        // Each output pixel from the upright canvas pixel the turn puts there.
        let map = Composition.sourceMap(rect: PixelRect(x: 0, y: 0, width: out.width, height: out.height),
                                        sourceWidth: W, sourceHeight: H, orientation: canvas.turn)
        upright.withUnsafeBytes { src in
            let from = src.bindMemory(to: UInt32.self)
            for y in 0..<out.height {
                let row = (pixels + y * stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<out.width {
                    let fx = Double(x) + 0.5, fy = Double(y) + 0.5
                    let sx = Int((map[0] * fx + map[1] * fy + map[2]).rounded(.down))
                    let sy = Int((map[3] * fx + map[4] * fy + map[5]).rounded(.down))
                    row[x] = from[sy * W + sx]
                }
            }
        }
    }

    /// `compose(_:on:into:stride:)` before the turn: the canvas upright, `width`×`height`.
    private func composeUpright(_ frames: [VideoFrame?], on canvas: Canvas, into pixels: UnsafeMutableRawPointer, stride: Int) throws {
        let W = canvas.width, H = canvas.height
        guard W > 0, H > 0, stride >= 4 * W else { throw RenderError.invalidSize("canvas \(W)x\(H), stride \(stride)") }
        guard frames.count == canvas.zones.count else {
            throw RenderError.invalidSize("\(frames.count) pictures for \(canvas.zones.count) zones")
        }
        Self.fill(pixels, stride: stride, width: W, height: H, with: canvas.background)
        while zoneCompositors.count < canvas.zones.count { zoneCompositors.append(CPUCompositor()) }
        if zoneCompositors.count > canvas.zones.count { zoneCompositors.removeLast(zoneCompositors.count - canvas.zones.count) }
        // Zones that overlap nothing else are drawn first, at once, each by its own compositor
        // straight into the canvas; then the others, in order.
        let alone = Self.zonesAlone(canvas)
        try drawAtOnce(alone.map { (canvas.zones[$0], frames[$0], zoneCompositors[$0]) }, into: pixels, stride: stride)
        for (i, (zone, frame)) in zip(canvas.zones, frames).enumerated() where !alone.contains(i) {
            guard zone.opacity > 0, let visible = zone.rect.clipped(width: W, height: H) else { continue }
            let r = zone.rect
            let compositor = zoneCompositors[i]
            if zone.opacity >= 1, visible == r {
                try compositor.composeZone(frame, zone, into: pixels + r.y * stride + 4 * r.x, stride: stride)
                continue
            }
            // Off the canvas in part, or see-through: drawn apart, then blended in as an opaque image.
            var own = [UInt8](repeating: 0, count: 4 * r.width * r.height)
            try own.withUnsafeMutableBytes { try compositor.composeZone(frame, zone, into: $0.baseAddress!, stride: 4 * r.width) }
            Overlay(image: Self.opaqueRGBA(xrgb: own, width: r.width, height: r.height), position: .point(x: r.x, y: r.y),
                    opacity: zone.opacity).blend(into: pixels, stride: stride, width: W, height: H, order: .xrgb8888)
        }
        for overlay in canvas.overlays { overlay.blend(into: pixels, stride: stride, width: W, height: H, order: .xrgb8888) }
    }

    /// `compose(_:on:into:stride:)` into a new packed rgb24 image of the output's size.
    public func compose(_ frames: [VideoFrame?], on canvas: Canvas) throws -> RGBImage {
        guard canvas.width > 0, canvas.height > 0 else { throw RenderError.invalidSize("canvas \(canvas.width)x\(canvas.height)") }
        let (w, h) = canvas.outputSize
        var pixels = [UInt8](repeating: 0, count: 4 * w * h)
        try pixels.withUnsafeMutableBytes { try compose(frames, on: canvas, into: $0.baseAddress!, stride: 4 * w) }
        return RGBImage(xrgb: pixels, width: w, height: h, stride: 4 * w)
    }

    /// The zones drawn opaque and whole on the canvas that overlap no other drawn zone.
    static func zonesAlone(_ canvas: Canvas) -> [Int] {
        let drawn = canvas.zones.indices.filter { canvas.zones[$0].opacity > 0 && canvas.zones[$0].rect.clipped(width: canvas.width, height: canvas.height) != nil }
        func overlap(_ a: PixelRect, _ b: PixelRect) -> Bool {
            a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
        }
        return drawn.filter { i in
            let z = canvas.zones[i]
            return z.opacity >= 1 && z.rect.clipped(width: canvas.width, height: canvas.height) == z.rect
                && !drawn.contains { $0 != i && overlap(canvas.zones[$0].rect, z.rect) }
        }
    }

    /// Draws each zone with its own compositor into its rectangle of the canvas at `pixels`, on as
    /// many threads as there are cores (the rectangles do not overlap, so no two threads write
    /// the same byte); the first error, if any, is thrown once all are done.
    private func drawAtOnce(_ work: [(Canvas.Zone, VideoFrame?, CPUCompositor)], into pixels: UnsafeMutableRawPointer, stride: Int) throws {
        guard work.count > 1 else {
            for (zone, frame, c) in work { try c.composeZone(frame, zone, into: pixels + zone.rect.y * stride + 4 * zone.rect.x, stride: stride) }
            return
        }
        var errors = [(any Error)?](repeating: nil, count: work.count)
        errors.withUnsafeMutableBufferPointer { slots in
            let jobs = ZoneJobs(work: work, pixels: pixels, stride: stride, errors: slots)
            DispatchQueue.concurrentPerform(iterations: work.count) { jobs.run($0) }
        }
        if let e = errors.lazy.compactMap({ $0 }).first { throw e }
    }

    /// One zone at its own size into `pixels` (its top-left corner): the picture as the zone's
    /// composition lays it out, or its background and layers when there is no picture; then the
    /// border.
    fileprivate func composeZone(_ frame: VideoFrame?, _ zone: Canvas.Zone, into pixels: UnsafeMutableRawPointer, stride: Int) throws {
        let w = zone.rect.width, h = zone.rect.height
        let c = zone.sized
        if let frame {
            try compose(frame, as: c, into: pixels, stride: stride, width: w, height: h)
        } else {
            Self.fill(pixels, stride: stride, width: w, height: h, with: c.background)
            c.overlay?.blend(into: pixels, stride: stride, width: w, height: h, order: .xrgb8888)
            c.subtitles?.blend(into: pixels, stride: stride, width: w, height: h, order: .xrgb8888)
        }
        guard let border = zone.border else { return }
        for strip in border.strips(of: PixelRect(x: 0, y: 0, width: w, height: h)) {
            Self.fill(pixels + strip.y * stride + 4 * strip.x, stride: stride, width: strip.width, height: strip.height, with: border.color)
        }
    }

    /// XRGB8888 pixels (B, G, R, X) as straight-alpha RGBA, every pixel opaque.
    static func opaqueRGBA(xrgb: [UInt8], width: Int, height: Int) -> RGBAImage {
        var rgba = [UInt8](repeating: 255, count: 4 * width * height)
        for i in 0..<(width * height) {
            rgba[4 * i] = xrgb[4 * i + 2]; rgba[4 * i + 1] = xrgb[4 * i + 1]; rgba[4 * i + 2] = xrgb[4 * i]
        }
        return RGBAImage(width: width, height: height, bytes: rgba)
    }
}

/// The zones `drawAtOnce` hands to its threads. `@unchecked Sendable` because iteration `i`
/// touches only what is its own: zone `i`'s compositor (one per zone), the bytes of zone `i`'s
/// rectangle (the rectangles do not overlap) and error slot `i`; the frames are only read; and
/// `concurrentPerform` returns only once every iteration has ended, while the caller still holds
/// the canvas and the slots.
private struct ZoneJobs: @unchecked Sendable {
    let work: [(Canvas.Zone, VideoFrame?, CPUCompositor)]
    let pixels: UnsafeMutableRawPointer
    let stride: Int
    let errors: UnsafeMutableBufferPointer<(any Error)?>

    func run(_ i: Int) {
        let (zone, frame, c) = work[i]
        do {
            try c.composeZone(frame, zone, into: pixels + zone.rect.y * stride + 4 * zone.rect.x, stride: stride)
        } catch {
            errors[i] = error
        }
    }
}
