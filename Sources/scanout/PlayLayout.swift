import ArgumentParser
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDisplay
import ScanoutPipeline
import ScanoutPlayer
import ScanoutRender
import ScanoutService

extension Play {
    /// `play --layout FILE`: a screen of zones, each playing its own playlist on a player of its
    /// own, composed at each refresh: on a KMS screen (`--output kms`, or `auto` with a screen
    /// connected), opened as `play` opens it (the same card, connector, mode, renderer and
    /// writeback `--capture`), its canvas the mode (a layout of its own size scaled in); or
    /// headless, at the layout's own size. The output is opened on the compositor's thread.
    /// Ends when every zone has ended (a zone that repeats plays until a signal stops it); one
    /// summary line per zone.
    func playLayout(_ file: String) throws {
        guard policy.token == nil else {
            throw ValidationError("--token: a layout's items carry their own tokens (\"token\" in each playlist entry)")
        }
        // Every zone's items verified before anything is shown; each zone is judged by the
        // policy of the item it plays, on every KMS output, every frame.
        let (layout, authorizer) = try policy.authorize(layout: try ScreenLayout.read(file: file), capture: capture != nil ? .writeback : nil)
        let policies = ZonePolicies()
        var c = PlayerConfiguration()
        c.decoder = try options.decoder
        c.demuxer = options.demuxer
        c.waitsOutSilence = false
        c.imageDuration = duration
        c.audio = try audio.settings()
        let opened = LayoutScreen()
        let screen = try ScreenPlayer(layout: layout, configuration: c, prepare: { id, player in
            policies.follow(player, zone: id, authorizer: authorizer)
        }) { try openLayoutOutput(layout, file: file, into: opened).policed(by: policies) }
        defer {
            screen.shutdown()
            if let report = opened.pipeline?.close() { StandardError.write("output: \(report)\n") }
        }
        while !interrupted(), screen.error == nil, opened.captureFailure == nil, !screen.allEnded {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let zones = zip(screen.zoneIDs, screen.players).map { id, p in
            let s = p.snapshot
            return "zone \(id): \(s.state.rawValue), \(s.framesPresented) frames presented, \(s.framesDropped) dropped"
        }
        screen.shutdown()
        if let error = screen.error { throw error }
        if let error = opened.pipeline?.captureError { throw error }
        if let kms = opened.pipeline?.kms {
            let k = kms.counters
            print("layout: \(screen.screen.composed) composed frames")
            print("kms: \(k.composited) composited, \(k.flips) flips, \(k.captures) captures, \(k.planeTurns) turned by the plane, \(k.compositorTurns) turned by the compositor")
        } else {
            print("layout: \(screen.screen.composed) composed frames, \(opened.headless?.presents ?? 0) shown")
        }
        for line in zones { print(line) }
        if let status = signalExitStatus() {
            StandardError.write("scanout: stopped by signal\n")
            throw ExitCode(status)
        }
    }

    /// Opens the layout's output (on the compositor's thread, `LayoutOutput.open`): on a KMS
    /// screen, captures written as `play --capture` writes them and how a turned canvas is
    /// shown said once per screen; headless, the layout gives the size.
    private func openLayoutOutput(_ layout: ScreenLayout, file: String, into opened: LayoutScreen) throws -> LayoutOutput {
        let out: LayoutOutput
        do {
            out = try LayoutOutput.open(outputSettings, layout: layout, named: file, gl: renderer == .gl, headlessSize: nil) { StandardError.write("\($0)\n") }
        } catch let error as LayoutOutputError {
            throw ValidationError("--layout: \(error)")
        }
        opened.pipeline = out.pipeline
        opened.headless = out.headless
        if let pipeline = out.pipeline, let kms = pipeline.kms {
            if let dir = capture {
                pipeline.onReport = { if case let .captureFailed(message) = $0 { opened.failCapture(message) } }
                try pipeline.capture(to: dir)
            }
            kms.onTurnChosen = { name, path in StandardError.write("rotation: \(path) on \(name)\n") }
        }
        return out
    }
}

/// What a layout's output opened: the pipeline of a KMS screen (for its summary and the restore)
/// or the headless output, and the first capture that could not be written.
///
/// `@unchecked Sendable`: `pipeline` and `headless` are written on the compositor's thread before
/// the screen's players start and read on the main thread once the compositor stopped
/// (`ScreenPlayer.shutdown`); `captureFailure` is read and written under `lock`.
private final class LayoutScreen: @unchecked Sendable {
    var pipeline: PlaybackPipeline?
    var headless: HeadlessCanvasOutput?
    private let lock = NSLock()
    private var failure: String?

    var captureFailure: String? { lock.withLock { failure } }
    func failCapture(_ message: String) { lock.withLock { if failure == nil { failure = message } } }
}
