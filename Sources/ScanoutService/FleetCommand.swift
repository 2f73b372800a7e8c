import Foundation
import HTTPTypes

/// A command that came through the fleet's broker: `{"method": "POST", "path": "/playlist",
/// "body": {...}, "id": "..."}` (method POST by default, body and id optional), answered by the
/// HTTP API, and the answer as it goes back: `{"id", "status", "body"}`, the body as JSON where
/// it is JSON, else `bodyBase64` and `contentType` (a snapshot's PNG).
enum FleetCommand {
    /// Paths whose answer is a stream, which a reply cannot carry.
    static let streams: Set<String> = ["/events"]

    struct Reply: Encodable, Sendable {
        var id: String?
        var status: Int
        var body: JSONFragment?
        var contentType: String?
        var bodyBase64: String?
    }

    /// The reply to `payload`, made by `requests`.
    static func answer(_ payload: [UInt8], requests: InProcessRequests) async -> [UInt8] {
        let reply: Reply
        switch parse(payload) {
        case .failure(let refusal):
            reply = Reply(id: refusal.id, status: 400, body: JSONFragment(WireJSON.data(Wire.Refusal(error: refusal.message, field: refusal.field))))
        case .success(let c):
            let answer = await requests.send(c.method, c.path, body: c.body)
            if answer.contentType?.hasPrefix("application/json") == true || answer.body.isEmpty {
                reply = Reply(id: c.id, status: answer.status, body: answer.body.isEmpty ? nil : JSONFragment(Data(answer.body)))
            } else {
                reply = Reply(id: c.id, status: answer.status, contentType: answer.contentType, bodyBase64: Data(answer.body).base64EncodedString())
            }
        }
        return Array(WireJSON.data(reply))
    }

    struct Parsed {
        var id: String?
        var method: HTTPRequest.Method
        var path: String
        var body: [UInt8]
    }

    struct Refusal: Error {
        var id: String?
        var message: String
        var field: String
    }

    static func parse(_ payload: [UInt8]) -> Result<Parsed, Refusal> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)), let o = object as? [String: Any] else {
            return .failure(Refusal(id: nil, message: "command: must be a JSON object {\"method\", \"path\", \"body\", \"id\"}", field: "command"))
        }
        let id = o["id"] as? String
        if let unknown = o.keys.filter({ !["id", "method", "path", "body"].contains($0) }).sorted().first {
            return .failure(Refusal(id: id, message: "\(unknown): unknown field (a command has method, path, body and id)", field: unknown))
        }
        if o["id"] != nil && id == nil { return .failure(Refusal(id: nil, message: "id: must be a string", field: "id")) }
        let methodName = (o["method"] as? String) ?? (o["method"] == nil ? "POST" : "")
        guard ["GET", "POST", "PUT", "DELETE"].contains(methodName), let method = HTTPRequest.Method(methodName) else {
            return .failure(Refusal(id: id, message: "method: must be GET, POST, PUT or DELETE (got \(o["method"].map { "\($0)" } ?? ""))", field: "method"))
        }
        guard let path = o["path"] as? String, path.hasPrefix("/"), !path.contains("#") else {
            return .failure(Refusal(id: id, message: "path: is required, an API path such as /playlist or /seek", field: "path"))
        }
        let route = String(path.split(separator: "?", maxSplits: 1).first ?? "")
        if streams.contains(route) {
            return .failure(Refusal(id: id, message: "path: \(route) is a stream; its events are on the events topic", field: "path"))
        }
        var body: [UInt8] = []
        if let b = o["body"], !(b is NSNull) {
            guard JSONSerialization.isValidJSONObject(b), let data = try? JSONSerialization.data(withJSONObject: b) else {
                return .failure(Refusal(id: id, message: "body: must be a JSON object or array (the HTTP API's body)", field: "body"))
            }
            body = Array(data)
        }
        return .success(Parsed(id: id, method: method, path: path, body: body))
    }
}

/// JSON bytes written as they are, inside an encoded value.
struct JSONFragment: Encodable, Sendable {
    let data: Data
    init(_ data: Data) { self.data = data }

    func encode(to encoder: any Encoder) throws {
        let value = try JSONDecoder().decode(AnyJSON.self, from: data)
        try value.encode(to: encoder)
    }
}

/// Any JSON value, decoded and encoded again (key order sorted by the encoder).
enum AnyJSON: Codable, Sendable {
    case null, bool(Bool), number(Double), integer(Int), string(String), array([AnyJSON]), object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) } else if let i = try? c.decode(Int.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) { self = .number(d) } else if let s = try? c.decode(String.self) { self = .string(s) } else if let a = try? c.decode([AnyJSON].self) {
            self = .array(a)
        } else { self = .object(try c.decode([String: AnyJSON].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let d): try c.encode(d)
        case .integer(let i): try c.encode(i)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}
