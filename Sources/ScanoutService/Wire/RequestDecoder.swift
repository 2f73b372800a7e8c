import Foundation

/// A request body the API reads into a `Decodable` type; `Field` lists its fields (those of the
/// body that are refused before anything else is checked, so that a misspelt one is named).
protocol RequestBody: Decodable {
    associatedtype Field: CodingKey & CaseIterable
}

extension RequestBody {
    static var fields: [String] { Field.allCases.map(\.stringValue) }
}

/// Decodes JSON (as `JSONObject.parse` read it) into a `Decodable` request type with the API's
/// checks and messages: every refusal is an `APIError` (400) naming the field by its path
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
        guard !(value is String), let n = value as? NSNumber, !JSONObject.isBoolean(n) else { throw APIError.badRequest(name, "must be a number") }
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
        guard let n = value as? NSNumber, JSONObject.isBoolean(n) else { throw APIError.badRequest(name, "must be true or false") }
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

// Ranges and choices, checked as the field is read, the refusal naming it.
extension KeyedDecodingContainer {
    func name(_ key: Key) -> String { RequestDecoder.name(codingPath + [key]) }

    /// Whether the field is given and not null, without reading it (with `RequestDecoder`, whose
    /// `allKeys` leave out nulls): a null field that is not read is refused as unknown.
    func has(_ key: Key) -> Bool { allKeys.contains { $0.stringValue == key.stringValue } }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key, in range: ClosedRange<Double>) throws -> Double? {
        guard let d = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard range.contains(d) else {
            throw APIError.badRequest(name(key), "must be within \(JSONObject.format(range.lowerBound))...\(JSONObject.format(range.upperBound)) (got \(JSONObject.format(d)))")
        }
        return d
    }

    func decode(_ type: Double.Type, forKey key: Key, in range: ClosedRange<Double>) throws -> Double {
        guard contains(key) else { throw APIError.badRequest(name(key), "is required") }
        return try decodeIfPresent(type, forKey: key, in: range)!
    }

    /// An integer within `range`; one too large for a double's exact integers is named with the range.
    func decodeIfPresent(_ type: Int.Type, forKey key: Key, in range: ClosedRange<Int>) throws -> Int? {
        guard let d = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard d == d.rounded() else { throw APIError.badRequest(name(key), "must be an integer") }
        guard abs(d) <= 9.007199254740992e15, range.contains(Int(d)) else {
            let got = abs(d) <= 9.007199254740992e15 ? String(Int(d)) : JSONObject.format(d)
            throw APIError.badRequest(name(key), "must be within \(range.lowerBound)...\(range.upperBound) (got \(got))")
        }
        return Int(d)
    }

    func decode(_ type: Int.Type, forKey key: Key, in range: ClosedRange<Int>) throws -> Int {
        guard contains(key) else { throw APIError.badRequest(name(key), "is required") }
        return try decodeIfPresent(type, forKey: key, in: range)!
    }

    /// One of `E`'s raw values, the choices named when it is not.
    func decodeChoiceIfPresent<E: RawRepresentable & CaseIterable>(_ type: E.Type, forKey key: Key) throws -> E? where E.RawValue == String {
        try decodeIfPresent(String.self, forKey: key, oneOf: E.allCases.map(\.rawValue)).flatMap(E.init(rawValue:))
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key, oneOf allowed: [String]) throws -> String? {
        guard let s = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard allowed.contains(s) else {
            throw APIError.badRequest(name(key), "must be one of \(allowed.joined(separator: ", ")) (got \"\(s)\")")
        }
        return s
    }
}
