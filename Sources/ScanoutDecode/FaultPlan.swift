import ScanoutCore
import ScanoutDemux

/// Faults to inject at the hardware decoder's seams, so that every fallback path runs in tests
/// and CI on machines with no VA-API device.
///
/// Written as a comma-separated list, in the `SCANOUT_FAULTS` environment variable for the command
/// line or parsed with `init(parsing:)` for the API:
///
/// | item | effect |
/// | --- | --- |
/// | `hw-standin` | hardware decoding is done by a *software stand-in for VA-API*: libavcodec decodes, each picture is copied into NV12/P010 memory files exported the way VA-API exports surfaces (one DMA-BUF-like descriptor per layer), and downloaded back from them. Decisions and logs name it as the stand-in; it is never hardware. |
/// | `hw-init` | opening the hardware decoder fails |
/// | `decode@N` | once frame N is due, every packet sent to the hardware decoder is rejected |
/// | `export@N` | exporting frame N as a DMA-BUF fails |
/// | `import@N` | importing frame N into CPU memory fails (the download every hardware frame goes through, before any EGL import) |
/// | `hang-loop@N` | once N frames have been presented, the player's loop thread stops turning for good (what a wedged driver call would do); the service's watchdog must notice |
/// | `audio-lost@N` | after N period writes, every write to the audio device fails with EIO (a device unplugged mid-play) |
/// | `audio-open@N` | the first N openings of the audio device fail (a device plugged in later) |
///
/// Frame numbers count the hardware decoder's output from 0 (the frame order of `framemd5`).
/// The decoder faults act only on the hardware path; software decoding is never faulted.
public struct FaultPlan: Sendable, Equatable, CustomStringConvertible {
    public var standIn = false
    public var hwInit = false
    public var decodeFrom: Int?
    public var exportAt: Int?
    public var importAt: Int?
    public var hangLoopAt: Int?
    public var audioLostAt: Int?
    public var audioOpenFailures: Int?

    public init(standIn: Bool = false, hwInit: Bool = false, decodeFrom: Int? = nil, exportAt: Int? = nil, importAt: Int? = nil,
                hangLoopAt: Int? = nil) {
        self.standIn = standIn; self.hwInit = hwInit; self.decodeFrom = decodeFrom; self.exportAt = exportAt; self.importAt = importAt
        self.hangLoopAt = hangLoopAt
    }

    /// Parses `hw-standin,hw-init,decode@12,export@30,import@5,hang-loop@48` (any subset, any order;
    /// empty: none).
    public init(parsing spec: String) throws {
        for raw in spec.split(separator: ",") {
            let item = String(raw).trimmingSpacesAndTabs
            if item.isEmpty { continue }
            switch item {
            case "hw-standin": standIn = true
            case "hw-init": hwInit = true
            default:
                let parts = item.split(separator: "@", maxSplits: 1)
                guard parts.count == 2, let n = Int(parts[1]), n >= 0 else {
                    throw DecoderSelectionError.badFaultSpec("'\(item)' is not a fault (known: \(Self.known))")
                }
                switch parts[0] {
                case "decode": decodeFrom = n
                case "export": exportAt = n
                case "import": importAt = n
                case "hang-loop": hangLoopAt = n
                case "audio-lost": audioLostAt = n
                case "audio-open": audioOpenFailures = n
                default: throw DecoderSelectionError.badFaultSpec("'\(item)' is not a fault (known: \(Self.known))")
                }
            }
        }
    }

    /// The plan in `SCANOUT_FAULTS` of `environment` (none when unset).
    public static func fromEnvironment(_ environment: [String: String]) throws -> FaultPlan {
        try FaultPlan(parsing: environment["SCANOUT_FAULTS"] ?? "")
    }

    static let known = "hw-standin, hw-init, decode@N, export@N, import@N, hang-loop@N, audio-lost@N, audio-open@N"

    public var isEmpty: Bool { self == FaultPlan() }

    /// The plan written back in its own syntax.
    public var description: String {
        var items: [String] = []
        if standIn { items.append("hw-standin") }
        if hwInit { items.append("hw-init") }
        if let n = decodeFrom { items.append("decode@\(n)") }
        if let n = exportAt { items.append("export@\(n)") }
        if let n = importAt { items.append("import@\(n)") }
        if let n = hangLoopAt { items.append("hang-loop@\(n)") }
        if let n = audioLostAt { items.append("audio-lost@\(n)") }
        if let n = audioOpenFailures { items.append("audio-open@\(n)") }
        return items.joined(separator: ",")
    }

    func decodeFails(framesOut: Int) -> Bool { decodeFrom.map { framesOut >= $0 } ?? false }
    func exportFails(frame: Int) -> Bool { exportAt == frame }
    func importFails(frame: Int) -> Bool { importAt == frame }
    /// Whether the player's loop should hang now, `framesPresented` frames into playback.
    public func loopHangs(framesPresented: Int) -> Bool { hangLoopAt.map { framesPresented >= $0 } ?? false }
}

extension String {
    var trimmingSpacesAndTabs: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
