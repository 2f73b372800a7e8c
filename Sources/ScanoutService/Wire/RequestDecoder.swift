import Foundation

/// A request body the API reads into a `Decodable` type; `Field` lists its fields (those of the
/// body that are refused before anything else is checked, so that a misspelt one is named).
protocol RequestBody: Decodable {
    associatedtype Field: CodingKey & CaseIterable
}

extension RequestBody {
    static var fields: [String] { Field.allCases.map(\.stringValue) }
}

/// Decodes JSON (as `decode(_:json:)` and `decodeBody` read it) into a `Decodable` request type
/// with the API's checks and messages: every refusal is an `APIError` (400) naming the field by its path
/// (`playlist[1].rotation`). Unlike JSONDecoder, on purpose: a null where a value may be left out
/// is refused ("must not be null") unless the type asks for it with `decodeNil`; numbers and
/// booleans are told apart (`1` is not `true`); integers are numbers with no fraction (`2.0` is
/// 2); the fields of an object that its type did not read are refused ("unknown field"), after
/// those it read.
enum RequestDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from value: Any, path: [any CodingKey] = []) throws(APIError) -> T {
        do {
            return try FieldDecoder(value: value, codingPath: path).decodeChecked(type)
        } catch let e as APIError {
            throw e
        } catch {
            throw APIError.badRequest(name(path).isEmpty ? "body" : name(path), "\(error)")
        }
    }

    /// A coding path as the API names fields: `playlist[1].overlay.image`.
    static func name(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let i = key.intValue { out += "[\(i)]" } else { out += out.isEmpty ? key.stringValue : ".\(key.stringValue)" }
        }
        return out
    }
}

// The JSON text of a request or of the config file, read into the values the decoder walks.
// JSONSerialization reads it, here only: unlike JSONDecoder it tells the decoder whether a value
// was written `true` or `1`, which the API refuses to confuse.
extension RequestDecoder {
    /// `T` from the JSON text `data`, which must be an object; an empty (or blank) text is an
    /// empty object. Unknown fields are refused after the known ones are checked.
    static func decode<T: Decodable>(_ type: T.Type, json data: Data) throws(APIError) -> T {
        try decode(T.self, from: object(data))
    }

    /// A request body read into `T`: a blank body is refused when `T` has fields; fields that are
    /// not `T`'s are refused before anything else is checked, so that a misspelt field is named
    /// as such; then each as `T` reads it.
    static func decodeBody<T: RequestBody>(_ type: T.Type, from data: Data) throws(APIError) -> T {
        try decode(T.self, from: bodyObject(data, fields: T.fields))
    }

    /// Refuses a body other than an empty one or `{}` (commands without parameters).
    static func checkEmptyBody(_ data: Data) throws(APIError) {
        _ = try bodyObject(data, fields: [])
    }

    /// Where `data` first breaks JSON's grammar (a config file names the line and column); nil
    /// when JSONSerialization reads it.
    static func syntaxError(in data: Data) -> JSONSyntaxError? {
        guard (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) == nil else { return nil }
        return JSONSyntax.firstError(in: data)
    }

    private static func bodyObject(_ data: Data, fields: [String]) throws(APIError) -> [String: Any] {
        if !fields.isEmpty, isBlank(data) { throw APIError(.badRequest, "body: a JSON object is required", field: "body") }
        let o = try object(data)
        if let extra = o.keys.sorted().first(where: { !fields.contains($0) }) {
            throw APIError.badRequest(extra, "unknown field")
        }
        return o
    }

    /// The JSON object of `data`; blank: an empty one.
    static func object(_ data: Data) throws(APIError) -> [String: Any] {
        if isBlank(data) { return [:] }
        let any: Any
        do {
            any = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            if let syntax = JSONSyntax.firstError(in: data) {
                throw APIError(.badRequest, "body: malformed JSON at line \(syntax.line), column \(syntax.column): \(syntax.message)", field: "body")
            }
            throw APIError(.badRequest, "body: malformed JSON (\(reason(error)))", field: "body")
        }
        guard let object = any as? [String: Any] else { throw APIError(.badRequest, "body: must be a JSON object", field: "body") }
        return object
    }

    private static func isBlank(_ data: Data) -> Bool {
        data.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    }

    private static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        if let d = ns.userInfo[NSDebugDescriptionErrorKey] as? String { return d }
        return ns.localizedDescription
    }

    /// JSONSerialization gives booleans as NSNumber too; this tells them from numbers.
    static func isBoolean(_ n: NSNumber) -> Bool {
        let t = String(cString: n.objCType)
        return t == "c" || t == "B"
    }

    /// A number as the API's messages write it: a whole one without a fraction (`5`, `1e+300`).
    static func format(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }
}

/// A key of an array element, or of a field named at run time.
struct WireKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) { stringValue = "\(intValue)"; self.intValue = intValue }
}

/// One JSON value being decoded, with its path.
private struct FieldDecoder: Swift.Decoder {
    let value: Any
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// The fields of the object read so far (shared with its keyed container).
    let read = ReadFields()

    init(value: Any, codingPath: [any CodingKey]) {
        self.value = value
        self.codingPath = codingPath
    }

    var name: String { RequestDecoder.name(codingPath) }

    /// `T` from this value; then the fields of the object that `T` did not read are refused.
    func decodeChecked<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == String.self { return try string() as! T }
        if T.self == Double.self { return try double() as! T }
        if T.self == Int.self { return try int() as! T }
        if T.self == Bool.self { return try bool() as! T }
        let v = try T(from: self)
        if let object = value as? [String: Any], let extra = object.keys.sorted().first(where: { !read.contains($0) }) {
            throw APIError.badRequest(RequestDecoder.name(codingPath + [WireKey(stringValue: extra)]), "unknown field")
        }
        return v
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let object = value as? [String: Any] else { throw APIError.badRequest(name, "must be an object") }
        return KeyedDecodingContainer(KeyedFields<Key>(object: object, codingPath: codingPath, read: read))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = value as? [Any] else { throw APIError.badRequest(name, "must be an array") }
        return Elements(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleField(decoder: self) }

    func string() throws -> String {
        guard let s = value as? String else { throw APIError.badRequest(name, "must be a string") }
        return s
    }

    func double() throws -> Double {
        guard !(value is String), let n = value as? NSNumber, !RequestDecoder.isBoolean(n) else { throw APIError.badRequest(name, "must be a number") }
        let d = n.doubleValue
        guard d.isFinite else { throw APIError.badRequest(name, "must be a finite number") }
        return d
    }

    func int() throws -> Int {
        let d = try double()
        guard d == d.rounded() else { throw APIError.badRequest(name, "must be an integer") }
        guard abs(d) <= 9.007199254740992e15 else { throw APIError.badRequest(name, "is too large") }
        return Int(d)
    }

    func bool() throws -> Bool {
        guard let n = value as? NSNumber, RequestDecoder.isBoolean(n) else { throw APIError.badRequest(name, "must be true or false") }
        return n.boolValue
    }
}

/// The fields of an object that its type read (contains does not read).
private final class ReadFields {
    private var names: Set<String> = []
    func insert(_ name: String) { names.insert(name) }
    func contains(_ name: String) -> Bool { names.contains(name) }
}

private struct KeyedFields<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: Any]
    let codingPath: [any CodingKey]
    let read: ReadFields

    /// The fields given and not null (`has`).
    var allKeys: [Key] { object.keys.sorted().filter { !(object[$0] is NSNull) }.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    /// The field's decoder; absent: "is required", null: "must not be null".
    private func field(_ key: Key) throws -> FieldDecoder {
        read.insert(key.stringValue)
        let path = codingPath + [key]
        guard let v = object[key.stringValue] else { throw APIError.badRequest(RequestDecoder.name(path), "is required") }
        if v is NSNull { throw APIError.badRequest(RequestDecoder.name(path), "must not be null") }
        return FieldDecoder(value: v, codingPath: path)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        read.insert(key.stringValue)
        return object[key.stringValue] is NSNull
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try field(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try field(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try field(key).double() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try field(key).int() }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try field(key).decodeChecked(type) }

    // Absent reads as nil; null is refused (`decodeNil` first where null means something).
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(key) ? decode(type, forKey: key) : nil }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(key) ? decode(type, forKey: key) : nil }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(key) ? decode(type, forKey: key) : nil }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(key) ? decode(type, forKey: key) : nil }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try present(key) ? decode(type, forKey: key) : nil }

    private func present(_ key: Key) -> Bool {
        read.insert(key.stringValue)
        return object[key.stringValue] != nil
    }

    // The unsized integer types the API does not use.
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decode(Double.self, forKey: key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try exact(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try exact(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try exact(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try exact(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try exact(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try exact(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try exact(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try exact(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try exact(key) }

    private func exact<I: FixedWidthInteger>(_ key: Key) throws -> I {
        let i = try decode(Int.self, forKey: key)
        guard let v = I(exactly: i) else {
            throw APIError.badRequest(RequestDecoder.name(codingPath + [key]), "must be within \(I.min)...\(I.max) (got \(i))")
        }
        return v
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try field(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try field(key).unkeyedContainer() }
    func superDecoder() throws -> any Swift.Decoder { FieldDecoder(value: object, codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Swift.Decoder { try field(key) }
}

private struct Elements: UnkeyedDecodingContainer {
    let array: [Any]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(array: [Any], codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    /// The next element's decoder (a null one is its type's to judge); the index moves on only
    /// when it decodes.
    private func next() throws -> FieldDecoder {
        let path = codingPath + [WireKey(intValue: currentIndex)]
        guard currentIndex < array.count else { throw APIError.badRequest(RequestDecoder.name(path), "is required") }
        return FieldDecoder(value: array[currentIndex], codingPath: path)
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < array.count, array[currentIndex] is NSNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let v = try next().decodeChecked(type)
        currentIndex += 1
        return v
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let c = try next().container(keyedBy: type)
        currentIndex += 1
        return c
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let c = try next().unkeyedContainer()
        currentIndex += 1
        return c
    }

    mutating func superDecoder() throws -> any Swift.Decoder {
        let d = try next()
        currentIndex += 1
        return d
    }
}

private struct SingleField: SingleValueDecodingContainer {
    let decoder: FieldDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    func decodeNil() -> Bool { decoder.value is NSNull }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeChecked(type) }
}
