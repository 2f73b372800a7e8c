import ArgumentParser
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDisplay
import ScanoutPlayer
import ScanoutRender
import ScanoutService

extension Play {
    /// `play --layout FILE`: a screen of zones, each playing its own playlist on a player of its
    /// own, composed at each refresh (headless). Ends when every zone has ended (a zone that
    /// repeats plays until a signal stops it); one summary line per zone.
    func playLayout(_ file: String) throws {
        let layout = try ScreenLayout.read(file: file)
        guard output != .kms else { throw ValidationError("--layout: only a headless output composes layouts yet (--output headless)") }
        guard let w = layout.width, let h = layout.height else {
            throw ValidationError("--layout: a headless screen has no mode; give width and height in the layout")
        }
        let size = layout.rotation % 180 == 0 ? (w, h) : (h, w)
        let out = renderer == .gl ? HeadlessCanvasOutput(makeGL: { try GLRenderer() }) : HeadlessCanvasOutput()
        var c = PlayerConfiguration()
        c.decoder = try options.decoder
        c.demuxer = options.demuxer
        c.waitsOutSilence = false
        c.imageDuration = duration
        c.audio = try audio.settings()
        StandardError.write("layout \(file): \(layout.zones.count) zones on a \(size.0)x\(size.1) headless screen (\(renderer == .gl ? "gl" : "cpu"))\n")
        let screen = ScreenPlayer(layout: layout, output: out, outputWidth: size.0, outputHeight: size.1, configuration: c)
        defer { screen.shutdown() }
        while !interrupted(), screen.error == nil, !screen.allEnded {
            Thread.sleep(forTimeInterval: 0.05)
        }
        if let error = screen.error { throw error }
        let zones = zip(screen.zoneIDs, screen.players).map { id, p in
            let s = p.snapshot
            return "zone \(id): \(s.state.rawValue), \(s.framesPresented) frames presented, \(s.framesDropped) dropped"
        }
        print("layout: \(screen.screen.composed) composed frames, \(out.presents) shown")
        for line in zones { print(line) }
        if let status = signalExitStatus() {
            StandardError.write("scanout: stopped by signal\n")
            throw ExitCode(status)
        }
    }
}
