import CEGL

/// What EGL and GLES offer on this machine, found by opening Mesa's surfaceless platform,
/// creating a GLES context and asking it. Every handle is released before `probe` returns.
public struct EGLCapabilities: Sendable, Equatable {
    public var available: Bool
    /// Why EGL is not usable, when `available` is false.
    public var reason: String?
    public var vendor = ""
    public var version = ""
    public var glesRenderer = ""
    public var glesVersion = ""
    public var dmaBufImport = false
    public var dmaBufImportModifiers = false
    public var surfacelessContext = false

    public static func unavailable(_ reason: String) -> EGLCapabilities { EGLCapabilities(available: false, reason: reason) }
}

public enum EGLProbe {
    /// Probes the surfaceless platform (headless rendering) by opening a real GLES context on it
    /// (`EGLDisplayContext`, which shares the process's EGL display safely with other users).
    public static func surfaceless() -> EGLCapabilities {
        do {
            let ctx = try EGLDisplayContext()
            var caps = EGLCapabilities(available: true)
            caps.vendor = ctx.eglVendor
            caps.version = ctx.eglVersion
            caps.glesRenderer = ctx.glRenderer
            caps.glesVersion = ctx.glVersion
            caps.dmaBufImport = ctx.hasEGLExtension("EGL_EXT_image_dma_buf_import")
            caps.dmaBufImportModifiers = ctx.hasEGLExtension("EGL_EXT_image_dma_buf_import_modifiers")
            caps.surfacelessContext = ctx.hasEGLExtension("EGL_KHR_surfaceless_context")
            return caps
        } catch let error as RenderError {
            return .unavailable(error.description)
        } catch {
            return .unavailable("\(error)")
        }
    }
}
