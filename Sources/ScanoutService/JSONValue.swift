import Foundation
import HTTPTypes
import Hummingbird
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// A request the API refuses: the HTTP status, a one-line message, and the field it concerns
/// (a JSON path such as `playlist[1].rotation`, or `Authorization`, `body`, `index`).
public struct APIError: Error, HTTPResponseError, CustomStringConvertible, Equatable {
    public var status: HTTPResponse.Status
    public var message: String
    public var field: String?

    public init(_ status: HTTPResponse.Status, _ message: String, field: String? = nil) {
        self.status = status
        self.message = message
        self.field = field
    }

    public static func badRequest(_ field: String, _ message: String) -> APIError {
        APIError(.badRequest, "\(field): \(message)", field: field)
    }

    public var description: String { message }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        // A refusal may quote a source URL: its userinfo is not sent back.
        jsonResponse(Wire.Refusal(error: message.redacted, field: field), status: status)
    }
}

/// Reads the fields of a JSON object one by one with their types and ranges checked, then
/// refuses any field it was not asked for. Every error names the field. The config file and
/// `PUT /config` are read with it; the other request bodies are `RequestBody` types that
/// `RequestDecoder` reads with the same checks and messages.
public struct JSONObject {
    public let values: [String: Any]
    /// Where this object sits in the request ("" for the body, "playlist[2]" for an item).
    public let path: String
    private var read: Set<String> = []

    public init(values: [String: Any], path: String = "") {
        self.values = values
        self.path = path
    }

    /// Parses a request body; an empty body is an empty object.
    public static func parse(_ data: Data) throws(APIError) -> JSONObject {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return JSONObject(values: [:]) }
        let any: Any
        do {
            any = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            if let syntax = JSONSyntax.firstError(in: data) {
                throw APIError(.badRequest, "body: malformed JSON at line \(syntax.line), column \(syntax.column): \(syntax.message)", field: "body")
            }
            throw APIError(.badRequest, "body: malformed JSON (\(Self.reason(error)))", field: "body")
        }
        guard let dict = any as? [String: Any] else { throw APIError(.badRequest, "body: must be a JSON object", field: "body") }
        return JSONObject(values: dict)
    }

    private static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        if let d = ns.userInfo[NSDebugDescriptionErrorKey] as? String { return d }
        return ns.localizedDescription
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    public var isEmpty: Bool { values.isEmpty }
    public func has(_ key: String) -> Bool { values[key] != nil && !(values[key] is NSNull) }

    /// The value of `key`; null is refused unless the field is `nullable` (then it reads as absent).
    private mutating func raw(_ key: String, nullable: Bool = false) throws(APIError) -> Any? {
        read.insert(key)
        guard let v = values[key] else { return nil }
        if v is NSNull {
            if nullable { return nil }
            throw .badRequest(name(key), "must not be null")
        }
        return v
    }

    public mutating func string(_ key: String, required: Bool = false, allowed: [String]? = nil, nullable: Bool = false) throws(APIError) -> String? {
        guard let v = try raw(key, nullable: nullable) else {
            if required { throw .badRequest(name(key), "is required") }
            return nil
        }
        guard let s = v as? String else { throw .badRequest(name(key), "must be a string") }
        if let allowed, !allowed.contains(s) {
            throw .badRequest(name(key), "must be one of \(allowed.joined(separator: ", ")) (got \"\(s)\")")
        }
        return s
    }

    public mutating func double(_ key: String, required: Bool = false, range: ClosedRange<Double>? = nil) throws(APIError) -> Double? {
        guard let v = try raw(key) else {
            if required { throw .badRequest(name(key), "is required") }
            return nil
        }
        guard !(v is String), let n = v as? NSNumber, !Self.isBoolean(n) else { throw .badRequest(name(key), "must be a number") }
        let d = n.doubleValue
        guard d.isFinite else { throw .badRequest(name(key), "must be a finite number") }
        if let range, !range.contains(d) {
            throw .badRequest(name(key), "must be within \(Self.format(range.lowerBound))...\(Self.format(range.upperBound)) (got \(Self.format(d)))")
        }
        return d
    }

    public mutating func int(_ key: String, required: Bool = false, range: ClosedRange<Int>? = nil) throws(APIError) -> Int? {
        guard let d = try double(key, required: required) else { return nil }
        guard d == d.rounded() else { throw .badRequest(name(key), "must be an integer") }
        guard abs(d) <= 9.007199254740992e15 else {
            if let range { throw .badRequest(name(key), "must be within \(range.lowerBound)...\(range.upperBound) (got \(Self.format(d)))") }
            throw .badRequest(name(key), "is too large")
        }
        let i = Int(d)
        if let range, !range.contains(i) {
            throw .badRequest(name(key), "must be within \(range.lowerBound)...\(range.upperBound) (got \(i))")
        }
        return i
    }

    public mutating func bool(_ key: String) throws(APIError) -> Bool? {
        guard let v = try raw(key) else { return nil }
        guard let n = v as? NSNumber, Self.isBoolean(n) else { throw .badRequest(name(key), "must be true or false") }
        return n.boolValue
    }

    public mutating func array(_ key: String, required: Bool = false) throws(APIError) -> [Any]? {
        guard let v = try raw(key) else {
            if required { throw .badRequest(name(key), "is required") }
            return nil
        }
        guard let a = v as? [Any] else { throw .badRequest(name(key), "must be an array") }
        return a
    }

    public mutating func object(_ key: String) throws(APIError) -> JSONObject? {
        guard let v = try raw(key) else { return nil }
        guard let d = v as? [String: Any] else { throw .badRequest(name(key), "must be an object") }
        return JSONObject(values: d, path: name(key))
    }

    /// Field `key` read into `T` by `RequestDecoder` (the refusals name it by its path); nil when
    /// absent, null refused.
    mutating func decode<T: Decodable>(_ key: String, as type: T.Type) throws(APIError) -> T? {
        guard let v = try raw(key) else { return nil }
        return try RequestDecoder.decode(T.self, from: v, path: [WireKey(stringValue: name(key))])
    }

    /// Refuses the fields that were not read.
    public func rejectUnknown() throws(APIError) {
        if let extra = values.keys.sorted().first(where: { !read.contains($0) }) {
            throw .badRequest(name(extra), "unknown field")
        }
    }

    /// JSONSerialization gives booleans as NSNumber too; this tells them from numbers.
    static func isBoolean(_ n: NSNumber) -> Bool {
        let t = String(cString: n.objCType)
        return t == "c" || t == "B"
    }

    static func format(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }
}
