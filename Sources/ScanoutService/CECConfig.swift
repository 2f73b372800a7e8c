import Foundation
import Logging
import ScanoutDisplay
import ScanoutKMS

/// `cec`: the TVs switched through HDMI-CEC with the screens (`POST /display`, a schedule's
/// `power: off`): `"auto"` (every adapter of /dev/cec* that can transmit; none is no error),
/// `"off"`, or the adapters' paths (`"/dev/cec0"` or a list).
public enum CECSetting: Sendable, Equatable {
    case auto
    case off
    case paths([String])

    /// The adapters opened; those that cannot be are logged and left out (auto: silently, for
    /// adapters that only monitor).
    func switches(logger: Logger) -> [any ScreenPowerSwitch] {
        let paths: [String]
        switch self {
        case .off: return []
        case .auto: paths = CECAdapter.paths()
        case .paths(let p): paths = p
        }
        var out: [any ScreenPowerSwitch] = []
        for p in paths {
            do {
                out.append(CECPowerSwitch(bus: try CECAdapter(path: p)))
                logger.notice("HDMI-CEC: \(p) switches its TV with the screens")
            } catch {
                if case .paths = self { logger.error("cec: \(error); that TV is not switched") } else { logger.info("cec: \(error)") }
            }
        }
        return out
    }
}

extension Wire.ConfigBody {
    /// `cec`: "auto", "off", a path or a list of paths.
    static func cec(_ c: Fields) throws -> CECSetting? {
        guard c.contains(.cec) else { return nil }
        if let s = try? c.decode(String.self, forKey: .cec) {
            switch s {
            case "auto": return .auto
            case "off": return .off
            default:
                guard s.hasPrefix("/dev/") else {
                    throw APIError.badRequest(c.name(.cec), "must be \"auto\", \"off\", or the adapters' paths (/dev/cec0, or a list) (got \"\(s)\")")
                }
                return .paths([s])
            }
        }
        guard let list = try? c.decode([String].self, forKey: .cec), !list.isEmpty, list.allSatisfy({ $0.hasPrefix("/dev/") }) else {
            throw APIError.badRequest(c.name(.cec), "must be \"auto\", \"off\", or the adapters' paths (/dev/cec0, or a list)")
        }
        return .paths(list)
    }
}

extension ServiceConfig {
    func encodeCEC(into c: inout KeyedEncodingContainer<WireKey>) throws {
        switch cec {
        case .auto: try c.encode("auto", forKey: "cec")
        case .off: try c.encode("off", forKey: "cec")
        case .paths(let p): try c.encode(p, forKey: "cec")
        }
    }
}
