import CEGL

/// What EGL and GLES offer on this machine, found by opening a headless GLES context (surfaceless,
/// else the EGL device platform, else the default display) and asking it. Every handle is
/// released before `probe` returns.
public struct EGLCapabilities: Sendable, Equatable {
    public var available: Bool
    /// Why EGL is not usable, when `available` is false.
    public var reason: String?
    /// The headless platform the context opened on, and why earlier ones were passed over.
    public var platform: HeadlessPlatformChoice?
    public var vendor = ""
    public var version = ""
    public var glesRenderer = ""
    public var glesVersion = ""
    /// Why the GLES renderer is software (llvmpipe …), nil when it looks like a GPU.
    public var softwareRasterizer: String?
    public var dmaBufImport = false
    public var dmaBufImportModifiers = false
    public var surfacelessContext = false
    public var extensions: [String] = []

    public static func unavailable(_ reason: String) -> EGLCapabilities { EGLCapabilities(available: false, reason: reason) }
}

public enum EGLProbe {
    /// Probes the headless platforms by opening a real GLES context (`EGLDisplayContext`, which
    /// shares the process's EGL display safely with other users).
    public static func headless(options: EGLDisplayContext.Options = .init()) -> EGLCapabilities {
        do {
            return describe(try EGLDisplayContext(options: options))
        } catch {
            return .unavailable("\(error)")
        }
    }

    /// What `context` offers.
    public static func describe(_ ctx: EGLDisplayContext) -> EGLCapabilities {
        var caps = EGLCapabilities(available: true)
        caps.platform = ctx.headlessChoice
        caps.vendor = ctx.eglVendor
        caps.version = ctx.eglVersion
        caps.glesRenderer = ctx.glRenderer
        caps.glesVersion = ctx.glVersion
        caps.softwareRasterizer = ctx.softwareRasterizer
        caps.dmaBufImport = ctx.hasEGLExtension("EGL_EXT_image_dma_buf_import")
        caps.dmaBufImportModifiers = ctx.hasEGLExtension("EGL_EXT_image_dma_buf_import_modifiers")
        caps.surfacelessContext = ctx.hasEGLExtension("EGL_KHR_surfaceless_context")
        caps.extensions = ctx.eglExtensions.sorted()
        return caps
    }
}
