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
    private static let platformSurfacelessMESA: EGLenum = 0x31DD

    /// Probes the surfaceless platform (headless rendering).
    public static func surfaceless() -> EGLCapabilities {
        typealias GetPlatformDisplay = @convention(c) (EGLenum, UnsafeMutableRawPointer?, UnsafePointer<EGLAttrib>?) -> EGLDisplay?
        guard let clientExt = eglQueryString(scanout_egl_no_display(), EGLint(EGL_EXTENSIONS)).map({ String(cString: $0) }) else {
            return .unavailable("EGL client extensions unavailable (no EGL 1.5 / EGL_EXT_client_extensions)")
        }
        guard clientExt.contains("EGL_MESA_platform_surfaceless") else {
            return .unavailable("EGL has no surfaceless platform (EGL_MESA_platform_surfaceless missing; install Mesa's libegl-mesa0)")
        }
        guard let sym = eglGetProcAddress("eglGetPlatformDisplay") else {
            return .unavailable("eglGetPlatformDisplay not found")
        }
        let getDisplay = unsafeBitCast(sym, to: GetPlatformDisplay.self)
        guard let display = getDisplay(platformSurfacelessMESA, nil, nil), display != scanout_egl_no_display() else {
            return .unavailable("eglGetPlatformDisplay(surfaceless) returned no display")
        }
        var major: EGLint = 0, minor: EGLint = 0
        guard eglInitialize(display, &major, &minor) == EGLBoolean(EGL_TRUE) else {
            return .unavailable("eglInitialize failed (EGL error 0x\(String(eglGetError(), radix: 16)))")
        }
        defer { eglTerminate(display) }
        var caps = EGLCapabilities(available: true)
        caps.vendor = eglQueryString(display, EGLint(EGL_VENDOR)).map { String(cString: $0) } ?? ""
        caps.version = eglQueryString(display, EGLint(EGL_VERSION)).map { String(cString: $0) } ?? "\(major).\(minor)"
        let ext = eglQueryString(display, EGLint(EGL_EXTENSIONS)).map { String(cString: $0) } ?? ""
        let names = Set(ext.split(separator: " ").map(String.init))
        caps.dmaBufImport = names.contains("EGL_EXT_image_dma_buf_import")
        caps.dmaBufImportModifiers = names.contains("EGL_EXT_image_dma_buf_import_modifiers")
        caps.surfacelessContext = names.contains("EGL_KHR_surfaceless_context")

        guard eglBindAPI(EGLenum(EGL_OPENGL_ES_API)) == EGLBoolean(EGL_TRUE) else {
            caps.available = false
            caps.reason = "EGL cannot bind the GLES API"
            return caps
        }
        let configAttribs: [EGLint] = [EGLint(EGL_SURFACE_TYPE), EGLint(EGL_PBUFFER_BIT),
                                       EGLint(EGL_RENDERABLE_TYPE), EGLint(EGL_OPENGL_ES2_BIT), EGLint(EGL_NONE)]
        var config: EGLConfig? = nil
        var count: EGLint = 0
        eglChooseConfig(display, configAttribs, &config, 1, &count)
        // GLES 3 first, GLES 2 as the fallback.
        var context: EGLContext? = nil
        for v in [3, 2] {
            let ctxAttribs: [EGLint] = [EGLint(EGL_CONTEXT_MAJOR_VERSION), EGLint(v), EGLint(EGL_NONE)]
            context = eglCreateContext(display, count > 0 ? config : scanout_egl_no_config(), scanout_egl_no_context(), ctxAttribs)
            if let c = context, c != scanout_egl_no_context() { break }
            context = nil
        }
        guard let ctx = context else {
            caps.available = false
            caps.reason = "no GLES 2 or 3 context (EGL error 0x\(String(eglGetError(), radix: 16)))"
            return caps
        }
        defer { eglDestroyContext(display, ctx) }
        if eglMakeCurrent(display, scanout_egl_no_surface(), scanout_egl_no_surface(), ctx) == EGLBoolean(EGL_TRUE) {
            caps.glesRenderer = glGetString(GLenum(GL_RENDERER)).map { String(cString: $0) } ?? ""
            caps.glesVersion = glGetString(GLenum(GL_VERSION)).map { String(cString: $0) } ?? ""
            eglMakeCurrent(display, scanout_egl_no_surface(), scanout_egl_no_surface(), scanout_egl_no_context())
        }
        return caps
    }
}
