import Foundation
import ScanoutCore
import ScanoutDisplay

/// An output a screen opened on its compositor's thread: where the screen goes, and its size
/// (the canvas's output size: a KMS screen's mode, a headless output's size).
public struct ScreenOutput {
    public var output: any CanvasOutput
    public var width: Int
    public var height: Int
    /// What it is, for the log ("headless cpu", "kms").
    public var description: String

    public init(output: any CanvasOutput, width: Int, height: Int, description: String = "") {
        self.output = output
        self.width = width
        self.height = height
        self.description = description
    }

}

extension ScreenPlayer {
    /// A screen whose output is opened by `open` on the compositor's thread, and composed there:
    /// a GLES context is current on the thread that made it, so a KMS screen drawn with GLES
    /// (or a headless GLES output) is opened where it is drawn. Once it is open, the zones'
    /// players start, pacing themselves on its vblanks (`vblankSource`) and taking GPU frames
    /// where it does (`acceptsGPUFrames`). The layout is fitted to the output's size
    /// (`ScreenLayout.fitted`): a layout of its own size is scaled in whole.
    ///
    /// Throws what `open` threw: nothing was started then (the compositor's thread has ended).
    /// `loadPlaylists` and `prepare` as `init(layout:output:…)` takes them.
    public convenience init(layout: ScreenLayout, configuration: PlayerConfiguration = PlayerConfiguration(),
                            refreshInterval: Duration = .nanoseconds(16_666_667), loadPlaylists: Bool = true,
                            prepare: ((String, Player) -> Void)? = nil, opening open: @escaping () throws -> ScreenOutput) throws {
        let host = ScreenThread()
        let opened = try host.open(open)
        self.init(layout: layout.fitted(outputWidth: opened.width, outputHeight: opened.height), output: opened.output,
                  outputWidth: opened.width, outputHeight: opened.height, configuration: configuration,
                  refreshInterval: refreshInterval, loadPlaylists: loadPlaylists, prepare: prepare, compositor: host)
    }
}

/// The compositor's thread of a screen that opens its own output: it runs the opener first, hands
/// the output over and waits; then it runs the compose loop it is given, or ends when the output
/// did not open.
///
/// `@unchecked Sendable`: `opener` is written before the thread starts, `opened` before
/// `openedSignal` is signalled and read after the wait, `body` before `go` is signalled and read
/// after the wait; no field is ever used by two threads at once.
final class ScreenThread: @unchecked Sendable {
    private var opener: (() throws -> ScreenOutput)?
    private var opened: Result<ScreenOutput, any Error>?
    private var body: (@Sendable () -> Void)?
    private let openedSignal = DispatchSemaphore(value: 0)
    private let go = DispatchSemaphore(value: 0)

    /// Starts the thread, which runs `open`; returns what it opened, or throws what it threw.
    func open(_ open: @escaping () throws -> ScreenOutput) throws -> ScreenOutput {
        opener = open
        Thread(named: "scanout-screen") { [self] in
            opened = Result { try opener!() }
            opener = nil
            openedSignal.signal()
            go.wait()
            body?()
        }.start()
        openedSignal.wait()
        let result = opened!
        opened = nil
        switch result {
        case .success(let output):
            return output
        case .failure(let error):
            go.signal()   // nothing to run: the thread ends
            throw error
        }
    }

    /// Runs `body` on the thread (once, after `open` returned).
    func run(_ body: @escaping @Sendable () -> Void) {
        self.body = body
        go.signal()
    }
}
