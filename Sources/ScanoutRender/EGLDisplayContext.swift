import CEGL
import ScanoutKMS
import Synchronization

/// An EGL display with one GLES context made current with no surface: rendering goes into
/// framebuffer objects. Owns the display's initialisation (reference-counted per process, see
/// `DisplayUsers`) and the context; both are released once, in `deinit`.
///
/// **One thread.** The context is made current on the thread that creates it, and every GL object
/// made with it (textures, programs, framebuffers) belongs to that thread: create, use and release
/// the context and its objects on one thread. The class is deliberately not `Sendable`.
///
/// Platforms: headless (`init(options:)`: Mesa's surfaceless platform, llvmpipe included, else
/// the EGL device platform, else the default display; see `HeadlessPlatform`) and the GBM
/// platform on a DRM device (`init(gbmDevice:)`: `EGL_PLATFORM_GBM_KHR` with the device's
/// `gbm_device` as the native display, kept alive by this object; the context is current with no
/// surface all the same, and rendering goes into FBOs). Scan-out will need a window surface on it.
/// Over vkms, Mesa's kms_swrast offers `EGL_EXT_image_dma_buf_import` there, which the
/// surfaceless platform lacks.
public final class EGLDisplayContext {
    /// The EGL platform to open.
    public enum Platform: Sendable, Equatable {
        /// `EGL_PLATFORM_SURFACELESS_MESA`: no native display, no window.
        case surfaceless
        /// `EGL_PLATFORM_GBM_KHR` over a `gbm_device` (`init(gbmDevice:)`).
        case gbm
        /// `EGL_PLATFORM_DEVICE_EXT` over an `EGLDeviceEXT` from `eglQueryDevicesEXT` (a GPU
        /// without a DRM node, e.g. NVIDIA's driver on a server; Mesa lists a software device).
        case device
        /// `eglGetDisplay(EGL_DEFAULT_DISPLAY)`: whatever the EGL library picks.
        case defaultDisplay
        /// Any other platform enum (tests use an invalid one to reach the "no display" branch).
        case other(UInt32)

        var eglValue: EGLenum {
            switch self {
            case .surfaceless: return 0x31DD
            case .gbm: return EGLenum(EGL_PLATFORM_GBM_KHR)
            case .device: return EGLenum(EGL_PLATFORM_DEVICE_EXT)
            case .defaultDisplay: return 0
            case .other(let v): return v
            }
        }

        var clientExtension: String? {
            switch self {
            case .surfaceless: return "EGL_MESA_platform_surfaceless"
            case .gbm: return "EGL_KHR_platform_gbm"
            case .device: return "EGL_EXT_platform_device"
            case .defaultDisplay, .other: return nil
            }
        }
    }

    /// How to create the context, and faults to inject for tests.
    public struct Options: Sendable {
        /// GLES major versions to try, in order (3 first, 2 as the fallback).
        public var contextVersions: [Int] = [3, 2]
        /// Extensions to treat as absent although the driver offers them (for tests of the
        /// fallbacks and of the "missing extension" errors).
        public var hiddenExtensions: Set<String> = []
        /// Treat the context as no newer than this GLES major version (Mesa answers a GLES 2
        /// request with a GLES 3.2 context; tests use this to reach the "no GLES 3" branch).
        public var glesVersionLimit: Int?
        /// The platforms a headless context (`init(options:)`) may open, in the order tried:
        /// surfaceless, then the EGL device platform, then the default display. One platform
        /// alone forces it (its own error is thrown when it fails).
        public var headlessPlatforms: [HeadlessPlatform]
        public init(contextVersions: [Int] = [3, 2], hiddenExtensions: Set<String> = [], glesVersionLimit: Int? = nil,
                    headlessPlatforms: [HeadlessPlatform] = HeadlessPlatform.allCases) {
            self.contextVersions = contextVersions
            self.hiddenExtensions = hiddenExtensions
            self.glesVersionLimit = glesVersionLimit
            self.headlessPlatforms = headlessPlatforms
        }
    }

    public let platform: Platform
    /// For a headless context: the platform it opened on and why the ones tried before it were
    /// passed over. Nil on the GBM platform and on one opened by `init(platform:nativeDisplay:)`.
    public let headlessChoice: HeadlessPlatformChoice?
    /// The GBM device of the GBM platform (released after the display, in `deinit`'s wake).
    public let gbmDevice: GBMDevice?
    private let display: EGLDisplay
    private let context: EGLContext
    private let config: EGLConfig?
    /// EGL display extensions (minus hidden ones).
    public let eglExtensions: Set<String>
    /// `EGL_VENDOR` and `EGL_VERSION` of the display ("Mesa Project", "1.5").
    public let eglVendor: String
    public let eglVersion: String
    /// GLES extensions (minus hidden ones).
    public let glExtensions: Set<String>
    /// `GL_VERSION`, e.g. "OpenGL ES 3.2 Mesa 22.3.6".
    public let glVersion: String
    /// `GL_RENDERER`, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
    public let glRenderer: String
    /// The context's GLES major version (from `GL_MAJOR_VERSION`, 2 when that query is absent).
    public let glesMajorVersion: Int
    /// The largest texture side the driver takes.
    public let maxTextureSize: Int

    /// Opens a headless context: the first of `options.headlessPlatforms` that gives one
    /// (`HeadlessPlatform.open`), recorded in `headlessChoice`.
    public convenience init(options: Options = Options()) throws {
        let (opened, choice) = try HeadlessPlatform.open(options: options)
        self.init(opened: opened, owner: nil, headlessChoice: choice, options: options)
    }

    /// Opens the GBM platform on the DRM device node at `gbmDevicePath`. Throws
    /// `deviceUnavailable` naming the path when it cannot be opened.
    public convenience init(gbmDevicePath: String, options: Options = Options()) throws {
        let device: GBMDevice
        do {
            device = try GBMDevice(path: gbmDevicePath)
        } catch let GBMError.deviceUnavailable(path, reason) {
            throw RenderError.deviceUnavailable(path: path, reason: reason)
        }
        try self.init(gbmDevice: device, options: options)
    }

    /// Opens the GBM platform on `gbmDevice` (kept alive by this context).
    public convenience init(gbmDevice: GBMDevice, options: Options = Options()) throws {
        try self.init(platform: .gbm, nativeDisplay: nil, owner: gbmDevice, options: options)
    }

    /// Opens `platform` on `nativeDisplay` (nil for surfaceless; other platforms for tests).
    /// The GBM platform only comes with a `GBMDevice` (`init(gbmDevice:)`), which owns the native
    /// display; a raw pointer for it is refused.
    package convenience init(platform: Platform, nativeDisplay: UnsafeMutableRawPointer?, options: Options = Options()) throws {
        if platform == .gbm {
            throw RenderError.eglUnavailable("the GBM platform needs a GBMDevice that owns the gbm_device (use init(gbmDevicePath:))")
        }
        try self.init(platform: platform, nativeDisplay: nativeDisplay, owner: nil, options: options)
    }

    private convenience init(platform: Platform, nativeDisplay: UnsafeMutableRawPointer?, owner: GBMDevice?, options: Options) throws {
        // The gbm_device is used only within this initialiser, while `owner` (stored) holds it.
        let native = owner.map { $0.withDevice { UnsafeMutableRawPointer($0) } } ?? nativeDisplay
        try self.init(opened: Self.open(platform, nativeDisplay: native, options: options), owner: owner, headlessChoice: nil, options: options)
    }

    /// Takes over the handles of `opened` (made current on this thread).
    init(opened: Opened, owner: GBMDevice?, headlessChoice: HeadlessPlatformChoice?, options: Options) {
        platform = opened.platform
        gbmDevice = owner
        self.headlessChoice = headlessChoice
        display = opened.display
        context = opened.context
        config = opened.config
        eglExtensions = opened.extensions
        let d = opened.display
        eglVendor = eglQueryString(d, EGLint(EGL_VENDOR)).map { String(cString: $0) } ?? ""
        eglVersion = eglQueryString(d, EGLint(EGL_VERSION)).map { String(cString: $0) } ?? ""
        glVersion = glGetString(GLenum(GL_VERSION)).map { String(cString: $0) } ?? ""
        glRenderer = glGetString(GLenum(GL_RENDERER)).map { String(cString: $0) } ?? ""
        let glExt = glGetString(GLenum(GL_EXTENSIONS)).map { String(cString: $0) } ?? ""
        glExtensions = Set(glExt.split(separator: " ").map(String.init)).subtracting(options.hiddenExtensions)
        // "OpenGL ES 3.2 Mesa ..." → 3; GL_MAJOR_VERSION is a GLES 3 query.
        let afterPrefix = glVersion.split(separator: " ").dropFirst(2).first ?? ""
        let major = Int(afterPrefix.split(separator: ".").first ?? "") ?? 2
        glesMajorVersion = min(major, options.glesVersionLimit ?? major)
        var maxSize: GLint = 0
        glGetIntegerv(GLenum(GL_MAX_TEXTURE_SIZE), &maxSize)
        maxTextureSize = Int(maxSize)
    }

    /// An initialised EGL display with a GLES context current on the calling thread: what `open`
    /// hands to `init(opened:...)`, which owns it from then on.
    struct Opened {
        var platform: Platform
        var display: EGLDisplay
        var context: EGLContext
        var config: EGLConfig?
        var extensions: Set<String>
    }

    /// Opens `platform` on `nativeDisplay`: display (initialised, counted in `DisplayUsers`), a
    /// GLES context, current with no surface. Everything made is released again when it throws.
    static func open(_ platform: Platform, nativeDisplay: UnsafeMutableRawPointer?, options: Options) throws -> Opened {
        guard let clientExt = eglQueryString(scanout_egl_no_display(), EGLint(EGL_EXTENSIONS)).map({ String(cString: $0) }) else {
            throw RenderError.eglUnavailable("no EGL client extensions (EGL 1.5 or EGL_EXT_client_extensions needed)")
        }
        let client = Set(clientExt.split(separator: " ").map(String.init)).subtracting(options.hiddenExtensions)
        if let needed = platform.clientExtension, !client.contains(needed) {
            throw RenderError.missingExtension(needed, neededFor: "the \(platform) EGL platform")
        }
        let found: EGLDisplay?
        if platform == .defaultDisplay {
            found = eglGetDisplay(scanout_egl_default_display())
        } else {
            typealias GetPlatformDisplay = @convention(c) (EGLenum, UnsafeMutableRawPointer?, UnsafePointer<EGLAttrib>?) -> EGLDisplay?
            guard let sym = eglGetProcAddress("eglGetPlatformDisplay") else {
                throw RenderError.eglUnavailable("eglGetPlatformDisplay not found (EGL 1.5 needed)")
            }
            found = unsafeBitCast(sym, to: GetPlatformDisplay.self)(platform.eglValue, nativeDisplay, nil)
        }
        guard let d = found, d != scanout_egl_no_display() else {
            let call = platform == .defaultDisplay ? "eglGetDisplay(EGL_DEFAULT_DISPLAY)" : "eglGetPlatformDisplay(0x\(String(platform.eglValue, radix: 16)))"
            throw RenderError.eglUnavailable("\(call) gave no display (EGL error 0x\(String(eglGetError(), radix: 16)))")
        }
        try DisplayUsers.acquire(d)
        var owned = false
        defer { if !owned { DisplayUsers.release(d) } }
        let ext = eglQueryString(d, EGLint(EGL_EXTENSIONS)).map { String(cString: $0) } ?? ""
        let names = Set(ext.split(separator: " ").map(String.init)).subtracting(options.hiddenExtensions)
        guard names.contains("EGL_KHR_surfaceless_context") else {
            throw RenderError.missingExtension("EGL_KHR_surfaceless_context", neededFor: "a context with no surface")
        }
        guard eglBindAPI(EGLenum(EGL_OPENGL_ES_API)) == EGLBoolean(EGL_TRUE) else {
            throw RenderError.eglCall("eglBindAPI(EGL_OPENGL_ES_API)", code: eglGetError())
        }
        let chosen = try config(on: d, versions: options.contextVersions, extensions: names)
        var ctx: EGLContext? = nil
        for v in options.contextVersions {
            let attribs: [EGLint] = [EGLint(EGL_CONTEXT_MAJOR_VERSION), EGLint(v), EGLint(EGL_NONE)]
            let c = eglCreateContext(d, chosen ?? scanout_egl_no_config(), scanout_egl_no_context(), attribs)
            if let c, c != scanout_egl_no_context() { ctx = c; break }
        }
        guard let ctx else {
            throw RenderError.eglCall("eglCreateContext(GLES \(options.contextVersions.map(String.init).joined(separator: " or ")))", code: eglGetError())
        }
        guard eglMakeCurrent(d, scanout_egl_no_surface(), scanout_egl_no_surface(), ctx) == EGLBoolean(EGL_TRUE) else {
            let code = eglGetError()
            eglDestroyContext(d, ctx)
            throw RenderError.eglCall("eglMakeCurrent (no surface)", code: code)
        }
        owned = true
        return Opened(platform: platform, display: d, context: ctx, config: chosen, extensions: names)
    }

    /// A pbuffer-capable GLES config on `d` (GLES 3-renderable first, then GLES 2, as `versions`
    /// asks); nil when there is none and `EGL_KHR_no_config_context` makes none needed.
    private static func config(on d: EGLDisplay, versions: [Int], extensions names: Set<String>) throws -> EGLConfig? {
        var chosen: EGLConfig? = nil
        var count: EGLint = 0
        for renderable in versions.map({ $0 >= 3 ? EGL_OPENGL_ES3_BIT : EGL_OPENGL_ES2_BIT }) where chosen == nil {
            let configAttribs: [EGLint] = [EGLint(EGL_SURFACE_TYPE), EGLint(EGL_PBUFFER_BIT),
                                           EGLint(EGL_RENDERABLE_TYPE), EGLint(renderable),
                                           EGLint(EGL_RED_SIZE), 8, EGLint(EGL_GREEN_SIZE), 8, EGLint(EGL_BLUE_SIZE), 8,
                                           EGLint(EGL_NONE)]
            if eglChooseConfig(d, configAttribs, &chosen, 1, &count) != EGLBoolean(EGL_TRUE) || count < 1 { chosen = nil }
        }
        if chosen == nil, !names.contains("EGL_KHR_no_config_context") {
            throw RenderError.missingExtension("EGL_KHR_no_config_context", neededFor: "a context without a pbuffer config")
        }
        return chosen
    }

    deinit {
        if eglGetCurrentContext() == context {
            eglMakeCurrent(display, scanout_egl_no_surface(), scanout_egl_no_surface(), scanout_egl_no_context())
        }
        eglDestroyContext(display, context)
        DisplayUsers.release(display)
    }

    /// Makes the context current on the calling thread (a no-op when it already is).
    public func makeCurrent() throws {
        if eglGetCurrentContext() == context { return }
        guard eglMakeCurrent(display, scanout_egl_no_surface(), scanout_egl_no_surface(), context) == EGLBoolean(EGL_TRUE) else {
            throw RenderError.eglCall("eglMakeCurrent", code: eglGetError())
        }
    }

    /// Whether the context is current on the calling thread.
    var isCurrent: Bool { eglGetCurrentContext() == context }

    /// Why this context renders in software, nil when it looks like a GPU: the GLES renderer is
    /// one of Mesa's CPU rasterisers (llvmpipe, softpipe, swrast), or the EGL device says
    /// `EGL_MESA_device_software`.
    public var softwareRasterizer: String? {
        let name = glRenderer.lowercased()
        for known in ["llvmpipe", "softpipe", "software rasterizer", "swrast"] where name.contains(known) {
            return "a software rasteriser"
        }
        if headlessChoice?.device?.software == true { return "a software EGL device (EGL_MESA_device_software)" }
        return nil
    }

    public func hasEGLExtension(_ name: String) -> Bool { eglExtensions.contains(name) }
    public func hasGLExtension(_ name: String) -> Bool { glExtensions.contains(name) }

    /// Throws `missingExtension` unless the EGL display offers `name`.
    func requireEGLExtension(_ name: String, for what: String) throws {
        guard hasEGLExtension(name) else { throw RenderError.missingExtension(name, neededFor: what) }
    }

    /// An EGL or GL extension entry point, loaded with `eglGetProcAddress` (never linked), cast to `T`.
    func procAddress<T>(_ name: String, as: T.Type) throws -> T {
        guard let p = eglGetProcAddress(name) else {
            throw RenderError.missingExtension(name, neededFor: "loading \(name) with eglGetProcAddress")
        }
        return unsafeBitCast(p, to: T.self)
    }

    /// Calls `body` with the EGL display (never stored outside this class).
    func withDisplay<R>(_ body: (EGLDisplay) throws -> R) rethrows -> R { try body(display) }

    /// Calls `body` with the EGL context (never stored outside this class).
    func withContext<R>(_ body: (EGLContext) throws -> R) rethrows -> R { try body(context) }

    /// Throws `glesVersionTooLow` unless the context is GLES `major` or later.
    public func requireGLES(_ major: Int) throws {
        guard glesMajorVersion >= major else {
            throw RenderError.glesVersionTooLow(have: "GLES \(glesMajorVersion) (\(glVersion))", need: "\(major).0")
        }
    }
}

/// `eglInitialize`/`eglTerminate` per EGL display, counted across the process:
/// `eglGetPlatformDisplay` hands every caller the same display, and `eglTerminate` by one owner
/// would pull it from under the others (tests create contexts on several threads at once).
enum DisplayUsers {
    private static let counts = Mutex<[UInt: Int]>([:])

    static func acquire(_ d: EGLDisplay) throws {
        let key = UInt(bitPattern: d)
        try counts.withLock { c in
            if let n = c[key], n > 0 { c[key] = n + 1; return }
            var major: EGLint = 0, minor: EGLint = 0
            guard eglInitialize(d, &major, &minor) == EGLBoolean(EGL_TRUE) else {
                throw RenderError.eglUnavailable("eglInitialize failed (EGL error 0x\(String(eglGetError(), radix: 16)))")
            }
            c[key] = 1
        }
    }

    static func release(_ d: EGLDisplay) {
        let key = UInt(bitPattern: d)
        counts.withLock { c in
            let n = (c[key] ?? 1) - 1
            if n <= 0 {
                c[key] = nil
                eglTerminate(d)
            } else {
                c[key] = n
            }
        }
    }
}
