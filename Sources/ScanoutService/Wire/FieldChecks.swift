import Foundation

// What request types check as they read a field (`RequestDecoder`): ranges, choices, fields
// that null clears, lists of strings; each refusal names the field.
extension KeyedDecodingContainer {
    func name(_ key: Key) -> String { RequestDecoder.name(codingPath + [key]) }

    /// Whether the field is given and not null, without reading it (with `RequestDecoder`, whose
    /// `allKeys` leave out nulls): a null field that is not read is refused as unknown.
    func has(_ key: Key) -> Bool { allKeys.contains { $0.stringValue == key.stringValue } }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key, in range: ClosedRange<Double>) throws -> Double? {
        guard let d = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard range.contains(d) else {
            throw APIError.badRequest(name(key), "must be within \(RequestDecoder.format(range.lowerBound))...\(RequestDecoder.format(range.upperBound)) (got \(RequestDecoder.format(d)))")
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
            let got = abs(d) <= 9.007199254740992e15 ? String(Int(d)) : RequestDecoder.format(d)
            throw APIError.badRequest(name(key), "must be within \(range.lowerBound)...\(range.upperBound) (got \(got))")
        }
        return Int(d)
    }

    func decode(_ type: Int.Type, forKey key: Key, in range: ClosedRange<Int>) throws -> Int {
        guard contains(key) else { throw APIError.badRequest(name(key), "is required") }
        return try decodeIfPresent(type, forKey: key, in: range)!
    }

    /// A field that null clears: nil when it is absent, `.some(nil)` when it is null, else its value.
    func decodeNullable<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T?? {
        try nullable(key) { try decode(T.self, forKey: key) }
    }

    /// A field that null clears, read by `value` when it is neither absent nor null.
    func nullable<T>(_ key: Key, _ value: () throws -> T) throws -> T?? {
        guard contains(key) else { return nil }
        return try decodeNil(forKey: key) ? .some(nil) : .some(value())
    }

    /// An array of non-empty strings (nil when absent); an element that is not one is refused
    /// with `message` ("must be a host name or address"), the element named.
    func decodeStrings(forKey key: Key, each message: String) throws -> [String]? {
        guard contains(key) else { return nil }
        var list = try nestedUnkeyedContainer(forKey: key)
        var out: [String] = []
        while !list.isAtEnd {
            let at = name(key) + "[\(list.currentIndex)]"
            guard let s = try? list.decode(String.self), !s.isEmpty else { throw APIError.badRequest(at, message) }
            out.append(s)
        }
        return out
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
