import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// `json` with the userinfo of every URL in its strings redacted (`URLRedaction`), at any depth:
/// what the API and the event stream send of sources, messages and reasons names no password.
func redactingUserinfo(_ json: [String: Any]) -> [String: Any] {
    json.mapValues(redactingUserinfo(value:))
}

private func redactingUserinfo(value: Any) -> Any {
    switch value {
    case let s as String: return URLRedaction.redact(s)
    case let d as [String: Any]: return redactingUserinfo(d)
    case let a as [Any]: return a.map(redactingUserinfo(value:))
    default: return value
    }
}
