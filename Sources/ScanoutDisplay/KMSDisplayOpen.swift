import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

extension KMSDisplay {
    /// Which renderer draws into scanout buffers.
    public enum RendererChoice: String, Sendable, CaseIterable {
        /// GLES when the GBM EGL display works, else the CPU (saying why).
        case auto
        case cpu
        case gl
    }

    /// Opens a real screen: the card at `devicePath` (nil: the first card with a connected
    /// screen), DRM master, the chosen renderer on GBM, and the outputs `options` asks for.
    /// `note` receives one line for each choice made on the user's behalf (renderer fallback).
    public static func open(devicePath: String?, renderer choice: RendererChoice = .auto, composition: Composition = Composition(),
                            options: Options = Options(), clock: any PlaybackClock = MonotonicClock(), directory: String = "/dev/dri",
                            note: (String) -> Void = { _ in }) throws -> KMSDisplay {
        let path: String
        if let devicePath {
            path = devicePath
        } else {
            let cards = OutputSelector.cards(directory: directory)
            guard !cards.isEmpty else { throw KMSDisplayError.noCard(directory: directory) }
            guard let card = cards.first(where: { !$0.connectedConnectors.isEmpty }) else {
                throw KMSDisplayError.noConnectedConnector(path: cards.map(\.path).joined(separator: ", "), connectors: [])
            }
            path = card.path
        }
        let device = try DRMDevice(path: path)
        let gbm: GBMDevice
        do {
            gbm = try GBMDevice(sharing: device)   // one descriptor for KMS and GBM
        } catch {
            throw KMSDisplayError.noDevice(path: path, reason: "\(error)")
        }
        var renderer: ScanoutRenderer
        switch choice {
        case .cpu:
            renderer = CPUScanoutRenderer(gbm: gbm)
        case .gl, .auto:
            do {
                let context = try EGLDisplayContext(gbmDevice: gbm)
                renderer = GLScanoutRenderer(gbm: gbm, gl: try GLRenderer(context: context))
                if choice == .auto { note("renderer: gl (\(context.glRenderer))") }
            } catch let e as RenderError where choice == .auto {
                note("renderer: cpu (gl unavailable: \(e))")
                renderer = CPUScanoutRenderer(gbm: gbm)
            }
        }
        return try KMSDisplay(device: device, renderer: renderer, composition: composition, options: options, clock: clock)
    }
}
