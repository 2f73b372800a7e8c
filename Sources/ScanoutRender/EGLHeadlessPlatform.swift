import CEGL

/// An EGL platform that needs no screen, in the order a headless context tries them.
public enum HeadlessPlatform: String, Sendable, CaseIterable, Codable {
    /// `EGL_MESA_platform_surfaceless`: Mesa's platform with no native display at all.
    case surfaceless
    /// `EGL_EXT_platform_device`: a display on an `EGLDeviceEXT` listed by `eglQueryDevicesEXT`
    /// (what NVIDIA's driver offers on a server with no /dev/dri; Mesa lists its software device).
    case device
    /// `eglGetDisplay(EGL_DEFAULT_DISPLAY)`: whatever platform the EGL library defaults to.
    case defaultDisplay = "default"

    var platform: EGLDisplayContext.Platform {
        switch self {
        case .surfaceless: return .surfaceless
        case .device: return .device
        case .defaultDisplay: return .defaultDisplay
        }
    }
}

/// One EGL device as `eglQueryDeviceStringEXT` describes it.
public struct EGLDeviceInfo: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Its position in `eglQueryDevicesEXT`'s list, and the list's length.
    public var index: Int
    public var count: Int
    /// The device's extensions (`EGL_EXTENSIONS`).
    public var extensions: [String]
    /// `EGL_DRM_DEVICE_FILE_EXT` or `EGL_DRM_RENDER_NODE_FILE_EXT`, when the device has a node.
    public var node: String?
    /// `EGL_MESA_device_software`: a software rasteriser, not a GPU.
    public var software: Bool { extensions.contains("EGL_MESA_device_software") }

    public var description: String {
        "device \(index) of \(count)\(software ? " (software)" : "")\(node.map { " \($0)" } ?? "")"
    }
}

/// Which headless platform a context opened on, and why each platform tried before it was passed over.
public struct HeadlessPlatformChoice: Sendable, Equatable, Codable, CustomStringConvertible {
    public struct PassedOver: Sendable, Equatable, Codable {
        public var platform: HeadlessPlatform
        /// The error that platform gave (a missing extension, no device, a failed call).
        public var reason: String
    }
    public var platform: HeadlessPlatform
    /// The device used on the device platform.
    public var device: EGLDeviceInfo?
    public var passedOver: [PassedOver]

    /// "surfaceless", or "device 0 of 1 (software) (surfaceless passed over: …)".
    public var description: String {
        let name = device.map { "\(platform.rawValue) \($0.description.dropFirst("device ".count))" } ?? platform.rawValue
        if passedOver.isEmpty { return name }
        return name + " (" + passedOver.map { "\($0.platform.rawValue) passed over: \($0.reason)" }.joined(separator: "; ") + ")"
    }
}

extension HeadlessPlatform {
    /// Opens the first of `options.headlessPlatforms` that gives a GLES context. When only one is
    /// asked for, its own error is thrown; when all fail, one `eglUnavailable` names each failure.
    static func open(options: EGLDisplayContext.Options) throws -> (EGLDisplayContext.Opened, HeadlessPlatformChoice) {
        var passed: [HeadlessPlatformChoice.PassedOver] = []
        var lastError: Error?
        for p in options.headlessPlatforms {
            do {
                if p == .device {
                    let (opened, device) = try openDevice(options: options)
                    return (opened, HeadlessPlatformChoice(platform: p, device: device, passedOver: passed))
                }
                let opened = try EGLDisplayContext.open(p.platform, nativeDisplay: nil, options: options)
                return (opened, HeadlessPlatformChoice(platform: p, device: nil, passedOver: passed))
            } catch {
                passed.append(.init(platform: p, reason: "\(error)"))
                lastError = error
            }
        }
        if options.headlessPlatforms.count == 1, let lastError { throw lastError }
        if passed.isEmpty { throw RenderError.eglUnavailable("no headless EGL platform asked for") }
        throw RenderError.eglUnavailable("no headless EGL platform opened (" + passed.map { "\($0.platform.rawValue): \($0.reason)" }.joined(separator: "; ") + ")")
    }

    /// The device platform on the first device that opens: GPUs before software devices.
    private static func openDevice(options: EGLDisplayContext.Options) throws -> (EGLDisplayContext.Opened, EGLDeviceInfo) {
        let client = Set((eglQueryString(scanout_egl_no_display(), EGLint(EGL_EXTENSIONS)).map { String(cString: $0) } ?? "")
            .split(separator: " ").map(String.init)).subtracting(options.hiddenExtensions)
        for needed in ["EGL_EXT_platform_device", "EGL_EXT_device_enumeration", "EGL_EXT_device_query"] where !client.contains(needed) {
            throw RenderError.missingExtension(needed, neededFor: "the EGL device platform")
        }
        typealias QueryDevices = @convention(c) (EGLint, UnsafeMutablePointer<EGLDeviceEXT?>?, UnsafeMutablePointer<EGLint>?) -> EGLBoolean
        typealias QueryDeviceString = @convention(c) (EGLDeviceEXT?, EGLint) -> UnsafePointer<CChar>?
        guard let q = eglGetProcAddress("eglQueryDevicesEXT"), let qs = eglGetProcAddress("eglQueryDeviceStringEXT") else {
            throw RenderError.missingExtension("eglQueryDevicesEXT", neededFor: "the EGL device platform")
        }
        let queryDevices = unsafeBitCast(q, to: QueryDevices.self)
        let queryString = unsafeBitCast(qs, to: QueryDeviceString.self)
        var count: EGLint = 0
        guard queryDevices(0, nil, &count) == EGLBoolean(EGL_TRUE) else {
            throw RenderError.eglCall("eglQueryDevicesEXT", code: eglGetError())
        }
        guard count > 0 else { throw RenderError.eglUnavailable("eglQueryDevicesEXT lists no devices") }
        var devices = [EGLDeviceEXT?](repeating: nil, count: Int(count))
        guard queryDevices(count, &devices, &count) == EGLBoolean(EGL_TRUE) else {
            throw RenderError.eglCall("eglQueryDevicesEXT", code: eglGetError())
        }
        let infos = devices.prefix(Int(count)).enumerated().map { i, device -> EGLDeviceInfo in
            let ext = (queryString(device, EGLint(EGL_EXTENSIONS)).map { String(cString: $0) } ?? "").split(separator: " ").map(String.init)
            // Asked only where the device says it can answer (Mesa's software device has no node).
            func string(_ name: Int32, if needed: String) -> String? {
                ext.contains(needed) ? queryString(device, EGLint(name)).map { String(cString: $0) } : nil
            }
            let node = string(EGL_DRM_RENDER_NODE_FILE_EXT, if: "EGL_EXT_device_drm_render_node") ?? string(EGL_DRM_DEVICE_FILE_EXT, if: "EGL_EXT_device_drm")
            return EGLDeviceInfo(index: i, count: Int(count), extensions: ext, node: node)
        }
        var failures: [String] = []
        // EGLDeviceEXT handles are static (never freed): passing one as the native display is safe.
        for info in infos.sorted(by: { !$0.software && $1.software }) {
            do {
                return (try EGLDisplayContext.open(.device, nativeDisplay: devices[info.index], options: options), info)
            } catch {
                failures.append("\(info): \(error)")
            }
        }
        throw RenderError.eglUnavailable("no EGL device opened (" + failures.joined(separator: "; ") + ")")
    }
}
