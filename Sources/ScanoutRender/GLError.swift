import CEGL

/// Why the GLES renderer cannot do its job. Each case names the missing or failing piece, and
/// `description` is the one line the CLI prints.
public enum RenderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No usable EGL: no library, no platform, or a display that does not initialise.
    case eglUnavailable(String)
    /// An EGL call failed; `code` is `eglGetError()`.
    case eglCall(String, code: Int32)
    /// The context is older than what the renderer needs (it needs GLES 2.0; GLES 3 is preferred).
    case glesVersionTooLow(have: String, need: String)
    /// An EGL or GLES extension the operation depends on is not offered.
    case missingExtension(String, neededFor: String)
    /// A capability that is not an extension (a precision, a limit) is lacking.
    case missingFeature(String, neededFor: String)
    /// A shader did not compile; `log` is the driver's info log.
    case shaderCompile(name: String, log: String)
    /// A program did not link; `log` is the driver's info log.
    case programLink(name: String, log: String)
    /// The driver refused a texture upload or an image import.
    case importRefused(String)
    /// The frame's layout has no import path.
    case unsupportedPixelFormat(String)
    /// A GL call failed (`glGetError`) or the framebuffer is incomplete.
    case glCall(String, code: UInt32)
    /// An output or overlay size the renderer cannot use.
    case invalidSize(String)
    /// A DRM device node that cannot be opened, or on which GBM cannot be created.
    case deviceUnavailable(path: String, reason: String)
    /// libass could not be set up for subtitles.
    case subtitles(String)

    public var description: String {
        switch self {
        case .eglUnavailable(let why): return "EGL unavailable: \(why)"
        case .eglCall(let call, let code): return "\(call) failed (EGL error 0x\(String(code, radix: 16)))"
        case .glesVersionTooLow(let have, let need): return "GLES \(need) needed, the context is \(have)"
        case .missingExtension(let name, let what): return "\(name) is missing (needed for \(what))"
        case .missingFeature(let what, let forWhat): return "the driver lacks \(what) (needed for \(forWhat))"
        case .shaderCompile(let name, let log): return "shader \(name) does not compile: \(log.trimmedLog)"
        case .programLink(let name, let log): return "program \(name) does not link: \(log.trimmedLog)"
        case .importRefused(let why): return "import refused: \(why)"
        case .unsupportedPixelFormat(let name): return "no GL import for pixel format \(name)"
        case .glCall(let call, let code): return "\(call) failed (GL error 0x\(String(code, radix: 16)))"
        case .invalidSize(let why): return "invalid size: \(why)"
        case .deviceUnavailable(let path, let reason): return "DRM device \(path) unavailable: \(reason)"
        case .subtitles(let why): return "subtitles: \(why) (is libass installed? tools/setup.sh installs it)"
        }
    }
}

extension String {
    /// An info log on one line: newlines to "; ", surrounding blanks and NULs removed.
    var trimmedLog: String {
        let parts = split(whereSeparator: { $0 == "\n" || $0 == "\0" })
            .map { trimBlanks($0) }
            .filter { !$0.isEmpty }
        return parts.isEmpty ? "(empty info log)" : parts.joined(separator: "; ")
    }
}

private func trimBlanks(_ line: Substring) -> String {
    var s = line
    while let f = s.first, f == " " || f == "\t" || f == "\r" { s.removeFirst() }
    while let l = s.last, l == " " || l == "\t" || l == "\r" { s.removeLast() }
    return String(s)
}

/// GL constants import as Int32 while GLenum is UInt32: one explicit conversion, in one place.
@inline(__always) func glEnum(_ v: Int32) -> GLenum { GLenum(UInt32(bitPattern: v)) }

/// Throws `RenderError.glCall` when the GL error flag is set (and clears every queued error).
func checkGL(_ call: @autoclosure () -> String) throws {
    let e = glGetError()
    if e != GLenum(GL_NO_ERROR) {
        while glGetError() != GLenum(GL_NO_ERROR) {}
        throw RenderError.glCall(call(), code: e)
    }
}
