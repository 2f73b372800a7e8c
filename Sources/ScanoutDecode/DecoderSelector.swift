import ScanoutCore
import ScanoutDemux

/// What the selector knows about the machine beyond the render nodes it probes itself.
public struct SelectorEnvironment: Sendable, Equatable {
    /// Whether a KMS display with a plane for the decoded format is there (the `native` type puts
    /// DMA-BUFs straight on it). The KMS output is built separately; until it says otherwise,
    /// native is unavailable with "no KMS display".
    public var nativePlane: Capability
    /// Whether the consumer can import DMA-BUFs through EGL: nil when it downloads frames to CPU
    /// memory instead (the CPU renderer, framemd5, decode), so no import is needed.
    public var dmaBufImport: Capability?
    /// Where render nodes are looked for.
    public var renderNodeDirectory: String
    /// A render node to use instead of the first that initialises (`--device /dev/dri/renderD129`;
    /// naming one makes `auto` mean VA-API), or a CUDA device ordinal for NVDEC (`--device 1`).
    public var device: String?
    /// Which hardware decoder `hw` uses (`--hw-backend`): VA-API, NVDEC, or the first that works.
    public var hwBackend: HardwareBackend
    /// Faults to inject at the hardware seams (`SCANOUT_FAULTS`), the stand-in among them.
    public var faults: FaultPlan

    public init(nativePlane: Capability = .unavailable("no KMS display"), dmaBufImport: Capability? = nil,
                renderNodeDirectory: String = "/dev/dri", device: String? = nil, hwBackend: HardwareBackend = .auto,
                faults: FaultPlan = FaultPlan()) {
        self.nativePlane = nativePlane; self.dmaBufImport = dmaBufImport; self.renderNodeDirectory = renderNodeDirectory
        self.device = device; self.hwBackend = hwBackend; self.faults = faults
    }

    /// The backends `type` tries, in order: native puts DMA-BUFs on a plane, so VA-API only; hw
    /// the requested one, or for `auto` VA-API then NVDEC (VA-API alone when `device` names a
    /// render node).
    func backends(for type: PlayerType) -> [HardwareBackend] {
        if type == .native { return [.vaapi] }
        switch hwBackend {
        case .auto: return device?.hasPrefix("/") == true ? [.vaapi] : HardwareBackend.preference
        case let b: return [b]
        }
    }

    /// The CUDA device ordinal for NVDEC: `device` when it is a number, else 0.
    var cudaOrdinal: Int { device.flatMap { Int($0) } ?? 0 }
}

/// Chooses the decoder of a stream: the requested player type (flag, else the content's hint,
/// else `auto`), and for `auto` the first of native → hw → sw that is available, recording a
/// verdict with its reason for each type considered. Hardware decoders are wrapped in a
/// `FallbackDecoder`, which switches to software mid-stream.
///
/// Precedence: an explicit `--player-type` (anything but `auto`) wins over the content's hint,
/// because the operator knows the machine (the overridden hint is recorded in the decision);
/// the hint wins over `auto`. A forced `native` or `hw` that is unavailable falls back to the
/// next type (native → hw → sw) unless `allowFallback` is false, in which case opening fails
/// with `DecoderSelectionError.unavailable`.
public enum DecoderSelector {
    /// Opens the decoder for `demuxer`'s video stream; emits `.selected` to the options' observer.
    public static func makeDecoder(for demuxer: Demuxer, options: DecoderOptions, hint: PlayerType?) throws -> (decoder: any Decoder, decision: DecoderDecision) {
        let (requested, source, ignoredHint) = resolve(flag: options.playerType, hint: hint)
        let env = options.environment
        var candidates: [PlayerType]
        switch requested {
        case .auto, .native: candidates = [.native, .hw, .sw]
        case .hw: candidates = [.hw, .sw]
        case .sw: candidates = [.sw]
        }
        if !options.allowFallback && requested != .auto { candidates = [requested] }
        var verdicts: [PlayerTypeVerdict] = []
        var chosen: (type: PlayerType, decoder: any Decoder, label: String)?
        for type in candidates {
            if chosen != nil {
                verdicts.append(PlayerTypeVerdict(type: type, available: false, reason: .notTried))
                continue
            }
            let forced: SelectionReason? = type == requested ? (source == .hint ? .forcedByHint(type) : (source == .flag ? .forcedByFlag(type) : nil)) : nil
            switch type {
            case .sw:
                let sw = try SoftwareDecoder(for: demuxer, options: options)
                let label = "libavcodec \(sw.codecName) (software)"
                verdicts.append(PlayerTypeVerdict(type: .sw, available: true, reason: forced ?? .available(label)))
                chosen = (.sw, sw, label)
            case .hw, .native:
                if type == .native, case .unavailable(let why) = env.nativePlane {
                    verdicts.append(PlayerTypeVerdict(type: type, available: false, reason: .noKMSDisplay(why)))
                    continue
                }
                if type == .native, env.hwBackend == .nvdec {
                    verdicts.append(PlayerTypeVerdict(type: type, available: false, reason: Self.nvdecNotNative))
                    continue
                }
                do {
                    let (decoder, label) = try openHardware(for: demuxer, options: options, type: type)
                    verdicts.append(PlayerTypeVerdict(type: type, available: true, reason: forced ?? .available(label)))
                    let wrapped = FallbackDecoder(input: demuxer.input, primary: decoder, primaryType: type,
                                                  fallbackAfter: options.fallbackAfter, allowFallback: options.allowFallback,
                                                  observer: options.observer) {
                        try SoftwareDecoder(for: demuxer, options: options)
                    }
                    chosen = (type, wrapped, label)
                } catch let e as HardwareUnavailable {
                    verdicts.append(PlayerTypeVerdict(type: type, available: false, reason: e.reason))
                }
            case .auto:
                continue
            }
        }
        guard let chosen else {
            let reason = verdicts.last?.reason ?? .notTried
            throw DecoderSelectionError.unavailable(type: requested, input: demuxer.input, reason: reason)
        }
        let decision = DecoderDecision(requested: requested, source: source, chosen: chosen.type, verdicts: verdicts,
                                       decoder: chosen.label, ignoredHint: ignoredHint)
        options.observer?(.selected(decision))
        return (chosen.decoder, decision)
    }

    /// The verdict on each concrete player type on this machine (what `scanout probe` prints).
    /// With a demuxer, the hardware verdict includes the driver's check of that stream's
    /// profile, bit depth and size.
    public static func verdicts(environment env: SelectorEnvironment, demuxer: Demuxer? = nil) -> [PlayerTypeVerdict] {
        func verdict(_ type: PlayerType, _ check: Result<String, HardwareUnavailable>) -> PlayerTypeVerdict {
            switch check {
            case .success(let label): return PlayerTypeVerdict(type: type, available: true, reason: .available(label))
            case .failure(let e): return PlayerTypeVerdict(type: type, available: false, reason: e.reason)
            }
        }
        let hw = verdict(.hw, hardwareCheck(environment: env, demuxer: demuxer, type: .hw))
        let native: PlayerTypeVerdict
        if case .unavailable(let why) = env.nativePlane {
            native = PlayerTypeVerdict(type: .native, available: false, reason: .noKMSDisplay(why))
        } else if env.hwBackend == .nvdec {
            native = PlayerTypeVerdict(type: .native, available: false, reason: nvdecNotNative)
        } else if case .failure(let e) = hardwareCheck(environment: env, demuxer: demuxer, type: .native) {
            native = PlayerTypeVerdict(type: .native, available: false, reason: e.reason)
        } else {
            native = PlayerTypeVerdict(type: .native, available: true, reason: .available("VA-API surfaces on a KMS plane"))
        }
        let sw = PlayerTypeVerdict(type: .sw, available: true, reason: .available("libavcodec\(demuxer.map { " " + $0.video.codecName } ?? "") (software)"))
        return [native, hw, sw]
    }

    static let nvdecNotNative = SelectionReason.notScanoutCapable("native needs VA-API: NVDEC frames are CUDA memory, not DMA-BUFs a KMS plane takes (--hw-backend nvdec)")

    /// The requested type, where the request came from, and a hint the flag overrode.
    static func resolve(flag: PlayerType, hint: PlayerType?) -> (PlayerType, RequestSource, PlayerType?) {
        if flag != .auto { return (flag, .flag, hint.flatMap { $0 == flag ? nil : $0 }) }
        if let hint { return (hint, .hint, nil) }
        return (.auto, .default, nil)
    }

    /// Opens the first backend of `type` that works; the reasons of those that did not (one
    /// backend: its own reason; several: each named).
    private static func openHardware(for demuxer: Demuxer, options: DecoderOptions, type: PlayerType) throws -> (any Decoder, String) {
        let env = options.environment
        if env.faults.standIn {
            try requireImport(env, type: type)
            let d = try StandInHardwareDecoder(for: demuxer, options: options, faults: env.faults)
            return (d, d.label)
        }
        return try firstBackend(env.backends(for: type)) { backend in
            switch backend {
            case .vaapi:
                try requireImport(env, type: type)
                let device = try VAAPIDevice.open(directory: env.renderNodeDirectory, device: env.device)
                let d = try VAAPIDecoder(for: demuxer, device: device, options: options, faults: env.faults)
                return (d, d.label)
            case .nvdec, .auto:
                let device = try NVDECDevice.open(ordinal: env.cudaOrdinal)
                let d = try NVDECDecoder(for: demuxer, device: device, options: options, faults: env.faults)
                return (d, d.label)
            }
        }
    }

    /// Runs `body` for each backend until one succeeds; throws one `HardwareUnavailable` with the
    /// reason of each that did not.
    private static func firstBackend<T>(_ backends: [HardwareBackend], _ body: (HardwareBackend) throws -> T) throws -> T {
        var refusals: [BackendRefusal] = []
        for backend in backends {
            do {
                return try body(backend)
            } catch let e as HardwareUnavailable {
                refusals.append(BackendRefusal(backend: backend, reason: e.reason))
            } catch {
                refusals.append(BackendRefusal(backend: backend, reason: .initFailed("\(error)")))
            }
        }
        throw HardwareUnavailable(reason: refusals.count == 1 ? refusals[0].reason : .noBackend(refusals))
    }

    /// hw through VA-API hands DMA-BUFs to a GPU consumer: one whose EGL refuses the import
    /// cannot take them (a CPU consumer, `dmaBufImport == nil`, downloads instead).
    private static func requireImport(_ env: SelectorEnvironment, type: PlayerType) throws {
        if type == .hw, case .unavailable(let why)? = env.dmaBufImport {
            throw HardwareUnavailable(reason: .importRefusedByEGL(why))
        }
    }

    private static func hardwareCheck(environment env: SelectorEnvironment, demuxer: Demuxer?, type: PlayerType) -> Result<String, HardwareUnavailable> {
        if env.faults.standIn {
            do { try requireImport(env, type: type) } catch let e as HardwareUnavailable { return .failure(e) } catch { fatalError("unreachable") }
            if let demuxer, SurfaceLayout.surfaceFormat(for: demuxer.video.pixelFormat) == nil {
                return .failure(HardwareUnavailable(reason: .profileUnsupported("\(demuxer.video.pixelFormat.name): only 4:2:0 8-bit (NV12) and 10-bit (P010) surfaces are handled (\(StandInHardwareDecoder.label))")))
            }
            if env.faults.hwInit { return .failure(HardwareUnavailable(reason: .initFailed("injected fault hw-init (SCANOUT_FAULTS)"))) }
            return .success(StandInHardwareDecoder.label)
        }
        do {
            return .success(try firstBackend(env.backends(for: type)) { backend -> String in
                let v = demuxer?.video
                let par = demuxer?.codecParameters
                switch backend {
                case .vaapi:
                    try requireImport(env, type: type)
                    let device = try VAAPIDevice.open(directory: env.renderNodeDirectory, device: env.device)
                    if let v, let par, let reason = VAAPIDevice.refusal(display: device.display, codec: par.pointee.codec_id, profile: par.pointee.profile,
                                                                        swFormat: v.pixelFormat, width: v.width, height: v.height) {
                        throw HardwareUnavailable(reason: reason)
                    }
                    if env.faults.hwInit { throw HardwareUnavailable(reason: .initFailed("injected fault hw-init (SCANOUT_FAULTS)")) }
                    return "VA-API \(device.path) (\(device.vendor))"
                case .nvdec, .auto:
                    let device = try NVDECDevice.open(ordinal: env.cudaOrdinal)
                    if let v, let par, let reason = NVDECDevice.refusal(context: device.cudaContext, codec: par.pointee.codec_id, profile: par.pointee.profile,
                                                                        swFormat: v.pixelFormat, width: v.width, height: v.height, deviceName: device.name) {
                        throw HardwareUnavailable(reason: reason)
                    }
                    if env.faults.hwInit { throw HardwareUnavailable(reason: .initFailed("injected fault hw-init (SCANOUT_FAULTS)")) }
                    return "NVDEC cuda:\(device.ordinal) (\(device.name))"
                }
            })
        } catch let e as HardwareUnavailable {
            return .failure(e)
        } catch {
            return .failure(HardwareUnavailable(reason: .initFailed("\(error)")))
        }
    }
}
