import ScanoutCore
import ScanoutDecode
import ScanoutKMS
import ScanoutRender

/// A composed screen on KMS outputs: every output's buffer drawn with the canvas, or with its
/// part of it (a wall), and all of them flipped in one atomic commit, so that every screen shows
/// the same composed frame at the same vblank.
extension KMSDisplay: CanvasOutput {
    /// Draws `canvas` into a free buffer of every output and flips them all at once. An output
    /// named in `wall` shows that rectangle of the canvas (its size the output's mode); any other
    /// shows the whole canvas, which must then be the size of its mode. An output the content
    /// policy censors shows the background; a zone whose own policy (`zoneFilters`) censors an
    /// output shows its background there, its picture and layers left out. A turned canvas is
    /// drawn upright and turned by the primary plane where its `rotation` takes the turn, and
    /// turned by the compositor otherwise (`turnPaths`).
    public func present(_ canvas: Canvas, frames: [VideoFrame?]) throws {
        drawStarted = clock.now()
        try handleHotplugIfNeeded()
        let censored = censorReasons()
        let now = clock.now()
        var request = AtomicRequest()
        var touched: [Output] = []
        for output in outputs {
            // A screen of zones is drawn in SDR (its HDR zones tone mapped).
            try prepareColour(output, for: nil)
            var view = try self.view(of: canvas, on: output)
            for i in view.zones.indices { view.zones[i].composition.toneMapping = options.hdr.toneMapping }
            let rotation = try planeRotation(for: view.turn, on: output)
            if rotation != nil {
                view.turn = .identity   // the plane turns it
                counters.planeTurns += 1
            } else if !view.turn.isIdentity {
                counters.compositorTurns += 1
            }
            try drawIntoFreeBuffer(output, size: view.outputSize, rotation: rotation, in: &request) { buffer in
                if let reason = censored[output.connectorID] {
                    try renderer.drawCensored(canvas.background, into: buffer)
                    lastCensorReason[output.name] = reason
                    counters.censored += 1
                } else {
                    let (shown, hidden) = zonesShown(on: output, view: view, frames: frames, at: now)
                    counters.censoredZones += hidden
                    try renderer.draw(shown.frames, on: shown.canvas, into: buffer)
                }
            }
            touched.append(output)
        }
        try commit(request, outputs: touched)
        counters.composited += 1
    }

    /// `view` and `frames` as `output` may show them: each zone whose filter censors the output
    /// drawn as its background alone; and how many zones were so censored.
    private func zonesShown(on output: Output, view: Canvas, frames: [VideoFrame?], at now: ClockTime)
        -> (shown: (canvas: Canvas, frames: [VideoFrame?]), hidden: Int) {
        guard !zoneFilters.isEmpty, let connector = connectors.first(where: { $0.id == output.connectorID }) else {
            return ((view, frames), 0)
        }
        var c = view, f = frames, hidden = 0
        for (i, filter) in zoneFilters where i < c.zones.count {
            guard let reason = filter.censorDescription(for: connector, at: now) else { continue }
            f[i] = nil
            c.zones[i].composition.overlay = nil
            c.zones[i].composition.subtitles = nil
            lastCensorReason[output.name] = "zone \(i): \(reason)"
            hidden += 1
        }
        return ((c, f), hidden)
    }

    /// What `output` shows of `canvas`: its rectangle of a wall (turned as the canvas is: a wall
    /// of turned screens), else the whole canvas.
    private func view(of canvas: Canvas, on output: Output) throws -> Canvas {
        let size = (output.mode.width, output.mode.height)
        if let part = wall[output.name] {
            let shown = canvas.turn.swapsDimensions ? (part.height, part.width) : (part.width, part.height)
            guard shown == size else {
                throw KMSDisplayError.bufferFailed("wall: \(output.name) shows \(part) of the canvas\(canvas.turn.isIdentity ? "" : " turned \(canvas.turn.rotation)°"), but its mode is \(size.0)x\(size.1)")
            }
            return canvas.viewport(part)
        }
        guard canvas.outputSize == size else {
            throw KMSDisplayError.bufferFailed("a \(canvas.outputSize.width)x\(canvas.outputSize.height) canvas on \(output.name), whose mode is \(size.0)x\(size.1)")
        }
        return canvas
    }
}

/// A wall of screens side by side showing one canvas: each output's rectangle of it, with the
/// bezels between the screens left out so that a line crossing them stays straight.
public enum WallLayout {
    /// `columns`×`rows` screens of `width`×`height` pixels each (their modes), `bezel` pixels of
    /// frame between two neighbours (both frames together), named row by row: the rectangle of
    /// the canvas each shows. The canvas is `columns·width + (columns−1)·bezel` wide, and as high.
    public static func grid(_ names: [String?], columns: Int, width: Int, height: Int, bezel: Int = 0) -> [String: PixelRect] {
        var wall: [String: PixelRect] = [:]
        for (i, name) in names.enumerated() {
            guard let name else { continue }   // another box's screen
            let c = i % max(columns, 1), r = i / max(columns, 1)
            wall[name] = PixelRect(x: c * (width + bezel), y: r * (height + bezel), width: width, height: height)
        }
        return wall
    }

    /// The bezel in pixels for `millimetres` of frame on a screen `screenWidthMM` wide showing
    /// `pixelsWide` pixels (the connector's physical size, from EDID).
    public static func bezelPixels(millimetres: Double, screenWidthMM: Double, pixelsWide: Int) -> Int {
        guard screenWidthMM > 0 else { return 0 }
        return Int((millimetres * Double(pixelsWide) / screenWidthMM).rounded())
    }
}
