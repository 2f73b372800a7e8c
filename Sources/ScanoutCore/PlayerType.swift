
/// How a stream is decoded and presented (the hw / sw / native choice of mobile player SDKs).
///
/// | type | decode | present |
/// | --- | --- | --- |
/// | `native` | VA-API → DMA-BUF | the DMA-BUF on a KMS plane, no GPU pass |
/// | `hw` | VA-API → DMA-BUF, or NVDEC → CUDA | EGLImage per plane, a CUDA → GL copy, or downloaded to CPU memory |
/// | `sw` | libavcodec threads | CPU planes |
/// | `auto` | native → hw → sw, the first that is available | |
public enum PlayerType: String, Sendable, CaseIterable, CustomStringConvertible {
    case auto, native, hw, sw
    public var description: String { rawValue }

    /// The concrete types `auto` tries, in order.
    public static let preference: [PlayerType] = [.native, .hw, .sw]
}

/// Which hardware decoder the `hw` player type uses (`--hw-backend`).
///
/// `auto` takes VA-API where a render node initialises, else NVDEC where CUDA initialises; each
/// backend passed over keeps its reason. `native` needs DMA-BUFs on a KMS plane, so it is VA-API
/// only.
public enum HardwareBackend: String, Sendable, CaseIterable, CustomStringConvertible {
    case auto, vaapi, nvdec
    public var description: String { rawValue }
    /// How logs and decisions name it.
    public var displayName: String {
        switch self {
        case .auto: return "auto"
        case .vaapi: return "VA-API"
        case .nvdec: return "NVDEC"
        }
    }
    /// The concrete backends `auto` tries, in order.
    public static let preference: [HardwareBackend] = [.vaapi, .nvdec]
}

/// One hardware backend that could not be used, and why.
public struct BackendRefusal: Sendable, Equatable, CustomStringConvertible {
    public var backend: HardwareBackend
    public var reason: SelectionReason
    public init(backend: HardwareBackend, reason: SelectionReason) { self.backend = backend; self.reason = reason }
    public var description: String { "\(backend.displayName): \(reason)" }
}

/// Where the requested player type came from.
public enum RequestSource: String, Sendable, Equatable {
    /// Nobody asked: `auto`.
    case `default`
    /// `--player-type` (or `DecoderOptions.playerType`).
    case flag
    /// The content's `playerType` hint (the `?playerType=` query of its URL or path).
    case hint
}

/// Whether something the selector depends on is there, and why not.
public enum Capability: Sendable, Equatable {
    case available
    case unavailable(String)
    public var isAvailable: Bool { self == .available }
}

/// Why a player type was chosen or passed over: one value per reason, each with a one-line
/// `description`.
public enum SelectionReason: Sendable, Equatable, CustomStringConvertible {
    /// native: no KMS display to put a DMA-BUF on (or the environment's own reason).
    case noKMSDisplay(String)
    /// hw/native: no `renderD*` node in the directory.
    case noRenderNode(directory: String)
    /// hw/native: the only render nodes are ones that cannot decode (vgem), or cannot be opened.
    case renderNodeUnusable(path: String, detail: String)
    /// hw/native: `vaInitialize` failed on every node; the status of the last one.
    case vaInitializeFailed(path: String, status: Int32, message: String)
    /// hw/native: the driver cannot decode this stream (codec profile, bit depth, size, chroma).
    case profileUnsupported(String)
    /// hw/native: the driver cannot export decoded surfaces as DMA-BUFs (DRM PRIME 2).
    case exportUnsupported(String)
    /// hw: the consumer's EGL refuses DMA-BUF import.
    case importRefusedByEGL(String)
    /// hw/native: opening the decoder failed.
    case initFailed(String)
    /// NVDEC: the CUDA driver library cannot be loaded (no libcuda.so.1, or one lacking an entry
    /// point); `detail` is the loader's message.
    case noCUDADriver(String)
    /// NVDEC: `cuInit` returned `status` (with CUDA's name for it).
    case cuInitFailed(status: Int32, name: String)
    /// NVDEC: CUDA initialised but reports no device.
    case noCUDADevice
    /// NVDEC: the CUDA device has no NVDEC entry point (libnvcuvid.so.1 missing or incomplete).
    case noNVDEC(String)
    /// native: the backend's frames cannot go on a KMS plane (NVDEC's are CUDA memory).
    case notScanoutCapable(String)
    /// hw with `--hw-backend auto`: no backend could be used; each one's reason.
    case noBackend([BackendRefusal])
    /// The content's hint chose this type.
    case forcedByHint(PlayerType)
    /// `--player-type` chose this type.
    case forcedByFlag(PlayerType)
    /// An earlier candidate was available, so this one was not tried.
    case notTried
    /// The type is usable; `detail` says with what.
    case available(String)

    public var description: String {
        switch self {
        case .noKMSDisplay(let why): return why
        case .noRenderNode(let dir): return "no render node (\(dir)/renderD* missing)"
        case .renderNodeUnusable(let path, let detail): return "no usable render node (\(path): \(detail))"
        case .vaInitializeFailed(let path, let status, let message): return "vaInitialize failed with status \(status) (\(message)) on \(path)"
        case .profileUnsupported(let why): return "profile unsupported: \(why)"
        case .exportUnsupported(let why): return "export unsupported: \(why)"
        case .importRefusedByEGL(let why): return "import refused by EGL: \(why)"
        case .initFailed(let why): return "init failed: \(why)"
        case .noCUDADriver(let detail): return "no libcuda (\(detail))"
        case .cuInitFailed(let status, let name): return "cuInit failed with error \(status) (\(name))"
        case .noCUDADevice: return "CUDA reports no device"
        case .noNVDEC(let detail): return "no NVDEC (\(detail))"
        case .notScanoutCapable(let why): return why
        case .noBackend(let refusals): return refusals.map(\.description).joined(separator: "; ")
        case .forcedByHint(let t): return "forced by hint (playerType=\(t))"
        case .forcedByFlag(let t): return "forced by --player-type \(t)"
        case .notTried: return "not tried (an earlier type was available)"
        case .available(let detail): return detail
        }
    }
}

/// The selector's verdict on one player type.
public struct PlayerTypeVerdict: Sendable, Equatable, CustomStringConvertible {
    public var type: PlayerType
    public var available: Bool
    public var reason: SelectionReason
    public init(type: PlayerType, available: Bool, reason: SelectionReason) {
        self.type = type; self.available = available; self.reason = reason
    }
    public var description: String { "\(type): \(available ? "available" : "unavailable"): \(reason)" }
}

/// What the selector decided for one stream, and why: the request, where it came from, and the
/// verdict on each type it considered, in order.
public struct DecoderDecision: Sendable, Equatable, CustomStringConvertible {
    public var requested: PlayerType
    public var source: RequestSource
    public var chosen: PlayerType
    /// The types considered, in the order tried; the last available one is `chosen`.
    public var verdicts: [PlayerTypeVerdict]
    /// What decodes: "libavcodec h264 (software)", "VA-API /dev/dri/renderD128 (...)", or the
    /// software stand-in for VA-API (fault injection), named as such.
    public var decoder: String
    /// A content hint that an explicit `--player-type` overrode, if any.
    public var ignoredHint: PlayerType?

    public init(requested: PlayerType, source: RequestSource, chosen: PlayerType, verdicts: [PlayerTypeVerdict], decoder: String, ignoredHint: PlayerType? = nil) {
        self.requested = requested; self.source = source; self.chosen = chosen; self.verdicts = verdicts
        self.decoder = decoder; self.ignoredHint = ignoredHint
    }

    /// The verdict on `type`, if it was considered.
    public func verdict(_ type: PlayerType) -> PlayerTypeVerdict? { verdicts.first { $0.type == type } }

    /// One line: "decoder: sw (requested auto; native: no KMS display; hw: no render node ...)".
    public var description: String {
        var parts = ["requested \(requested)\(source == .default ? "" : " by \(source == .hint ? "content hint" : "--player-type")")"]
        if let ignoredHint { parts.append("hint playerType=\(ignoredHint) overridden by --player-type") }
        for v in verdicts where v.type != chosen && v.reason != .notTried {
            parts.append("\(v.type): \(v.reason)")
        }
        return "decoder: \(chosen), \(decoder) (\(parts.joined(separator: "; ")))"
    }
}

/// A decoder switch in the middle of a stream.
public struct DecoderFallback: Sendable, Equatable, CustomStringConvertible {
    public var from: PlayerType
    public var to: PlayerType
    public var reason: String
    /// Index of the first frame the new decoder delivers (frames before it came from `from`).
    public var frame: Int
    public init(from: PlayerType, to: PlayerType, reason: String, frame: Int) {
        self.from = from; self.to = to; self.reason = reason; self.frame = frame
    }
    /// The one stderr line the command line prints.
    public var description: String { "decoderFallback from=\(from) to=\(to) frame=\(frame) reason=\(reason)" }
}

/// What the decoding layer tells its observer, on the decoding thread, as it happens.
public enum DecoderEvent: Sendable, Equatable {
    /// The decoder was chosen (once per opened stream).
    case selected(DecoderDecision)
    /// The decoder was replaced mid-stream.
    case decoderFallback(DecoderFallback)
}

/// The content's own player-type hint: a `playerType` query parameter on its URL or path
/// (`movie.mp4?playerType=sw`, `https://host/a.m3u8?token=x&playerType=hw`). It is removed before
/// the input is opened; other query parameters stay.
public enum ContentHint {
    /// The input without its `playerType` parameter, and the hint's value. An unknown value is
    /// an error (it names the accepted ones).
    public static func split(_ input: String) throws -> (input: String, hint: PlayerType?) {
        guard let q = input.firstIndex(of: "?") else { return (input, nil) }
        let base = input[..<q]
        var rest = input[input.index(after: q)...]
        var fragment = ""
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[hash...])
            rest = rest[..<hash]
        }
        var kept: [Substring] = []
        var hint: PlayerType?
        for item in rest.split(separator: "&", omittingEmptySubsequences: false) {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if pair.first == "playerType" {
                let value = pair.count > 1 ? String(pair[1]) : ""
                guard let t = PlayerType(rawValue: value) else {
                    throw DecoderSelectionError.badHint(input: input, value: value)
                }
                hint = t
            } else {
                kept.append(item)
            }
        }
        guard hint != nil else { return (input, nil) }
        let query = kept.isEmpty ? "" : "?" + kept.joined(separator: "&")
        return (String(base) + query + fragment, hint)
    }
}

/// Why a stream could not be given the decoder that was asked for. `description` is the one line
/// the command line prints.
public enum DecoderSelectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `--no-fallback` and the requested type is unavailable at start.
    case unavailable(type: PlayerType, input: String, reason: SelectionReason)
    /// `--no-fallback` and the hardware decoder failed mid-stream.
    case failedMidStream(type: PlayerType, input: String, frame: Int, reason: String)
    /// A `playerType` hint with a value that names no player type.
    case badHint(input: String, value: String)
    /// `SCANOUT_FAULTS` (or `FaultPlan(parsing:)`) could not be read.
    case badFaultSpec(String)

    public var description: String {
        switch self {
        case .unavailable(let type, let input, let reason):
            return "\(input): player type \(type) unavailable: \(reason) (--no-fallback given; drop it to fall back to software, or use --player-type sw)"
        case .failedMidStream(let type, let input, let frame, let reason):
            return "\(input): \(type) decoding failed at frame \(frame): \(reason) (--no-fallback given; drop it to continue in software)"
        case .badHint(let input, let value):
            return "\(input): playerType=\(value) is not a player type (use auto, native, hw or sw)"
        case .badFaultSpec(let why):
            return "SCANOUT_FAULTS: \(why)"
        }
    }
}
