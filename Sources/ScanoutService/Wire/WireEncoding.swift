import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ScanoutCore

/// The control API's wire types (`Wire.State`, `Wire.SeekRequest`...): one file per resource in
/// this folder. Responses and events are `Encodable` structs sent with sorted keys; a field that
/// is `null` when it has no value is `@Nullable` (a plain optional is left out when nil). Request
/// bodies are `Decodable` structs read by `RequestDecoder`, whose refusals name the field.
enum Wire {}

/// A field sent as `null` when it has no value (the synthesised `Encodable` leaves a nil optional
/// out).
@propertyWrapper
struct Nullable<Value: Encodable & Sendable>: Encodable, Sendable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
}

enum WireJSON {
    /// `value` as JSON with sorted keys; `{}` for a value JSON cannot hold (a non-finite number).
    static func data(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    static func string(_ value: some Encodable) -> String {
        String(decoding: data(value), as: UTF8.self)
    }
}

/// A JSON response with sorted keys.
func jsonResponse(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = "application/json"
    return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: WireJSON.data(value))))
}

extension String {
    /// With the userinfo of its URLs hidden (`URLRedaction`): what the API sends of sources,
    /// messages and reasons names no password.
    var redacted: String { URLRedaction.redact(self) }
}
