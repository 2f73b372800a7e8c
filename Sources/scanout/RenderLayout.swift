import ArgumentParser
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutPlayer
import ScanoutRender
import ScanoutService

extension Render {
    /// `render --layout FILE --at T`: the screen the layout describes, T seconds after its zones
    /// started, as one PNG per time (`layout-at-Ts.png` in --out): each zone's frame found as
    /// `render --at` finds it, in the item its playlist has reached, laid out in the zone.
    func renderLayout(_ file: String) throws {
        let layout = try ScreenLayout.read(file: file)
        let times = try parseList(at, as: Double.self, option: "--at")
        var decoding = try options.decoder
        decoding.stillDuration = decoding.stillDuration ?? PlayerConfiguration.defaultImageDuration
        let output = try layoutOutputSize(layout)
        let zones = layout.drawingOrder
        let timelines = try zones.map { try ZoneTimeline(zone: $0, decoder: decoding, demuxer: options.demuxer) }
        let gl = renderer == .cpu ? nil : try GLRenderer()
        let cpu = CPUCompositor()
        let png = PNGEncoder()
        try makeDirectory(directory)
        var seekers: [String: FrameSeeker] = [:]
        let base = layout.canvas(outputWidth: output.width, outputHeight: output.height)
        let texts = try zip(zones, base.zones.map(\.rect)).map { zone, r in try zone.text.map { try TextZone($0, width: r.width, height: r.height) } }
        for t in times {
            var canvas = base
            var frames: [VideoFrame?] = []
            for (i, zone) in zones.enumerated() {
                guard let (n, local) = timelines[i].locate(t) else { frames.append(nil); continue }
                let item = zone.playlist[n]
                let key = "\(n) \(zone.id)"
                let seeker = try seekers[key] ?? FrameSeeker(input: item.source, demuxerOptions: options.demuxer,
                                                             decoderOptions: ZoneTimeline.options(decoding, item))
                seekers[key] = seeker
                frames.append(try seeker.frame(try seeker.frameNumber(at: local)).clone())
                canvas.zones[i].composition.orientation = item.orientation(stream: seeker.reader.video.orientation)
                canvas.zones[i].composition.scaling = item.scaling ?? zone.scaling
                if let logo = item.overlay { canvas.zones[i].composition.overlay = logo }
            }
            for (i, text) in texts.enumerated() {
                if let layer = text?.layer(at: t) { canvas.zones[i].composition.addText(layer) }
            }
            let image = try gl.map { try $0.render(frames.map { $0.map { GLSource.frame($0) } }, on: canvas) }
                ?? cpu.compose(frames, on: canvas)
            let path = (directory.hasSuffix("/") ? directory : directory + "/") + "layout-at-\(t)s.png"
            try png.write(image, to: path)
            print("\(path)  \(zones.count) zones  \(image.width)x\(image.height)")
        }
    }

    /// The output a layout is drawn on: --size, else the layout's own canvas turned.
    private func layoutOutputSize(_ layout: ScreenLayout) throws -> (width: Int, height: Int) {
        if let size = try layoutOptions().size { return size }
        guard let w = layout.width, let h = layout.height else {
            throw ValidationError("--layout: give --size WxH (the screen) or width and height in the layout")
        }
        return layout.rotation % 180 == 0 ? (w, h) : (h, w)
    }
}
