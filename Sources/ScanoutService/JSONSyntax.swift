import Foundation

/// Where a JSON text (RFC 8259) first breaks the grammar: the line and column (1-based; the
/// column counts characters) and what was expected there. Foundation's parser reports only "around
/// character N"; a config file's error names `file:line:column` so that an editor jumps to it.
struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    var line: Int
    var column: Int
    var message: String
    var description: String { "\(line):\(column): \(message)" }
}

enum JSONSyntax {
    /// The first syntax error in `data`, nil when it is JSON. Iterative (an explicit stack), so
    /// that deeply nested input costs no call stack.
    static func firstError(in data: Data) -> JSONSyntaxError? {
        let bytes = [UInt8](data)
        var scanner = Scanner(bytes: bytes)
        guard let (offset, message) = scanner.run() else { return nil }
        return locate(offset, in: bytes, message: message)
    }

    /// Line and column of byte `offset` (columns count UTF-8 sequences, not bytes).
    static func locate(_ offset: Int, in bytes: [UInt8], message: String) -> JSONSyntaxError {
        var line = 1, column = 1
        for b in bytes[..<min(offset, bytes.count)] {
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return JSONSyntaxError(line: line, column: column, message: message)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        enum Container { case object, array }
        enum Step { case value, firstKeyOrEnd, key, colon, firstValueOrEnd, afterValue }

        /// The offset and message of the first error, nil for none.
        mutating func run() -> (Int, String)? {
            var stack: [Container] = []
            var step = Step.value
            while true {
                skipSpace()
                let c: UInt8? = i < bytes.count ? bytes[i] : nil
                switch step {
                case .value, .firstValueOrEnd:
                    if step == .firstValueOrEnd, c == UInt8(ascii: "]") { i += 1; stack.removeLast(); step = .afterValue; continue }
                    guard let c else { return (i, "expected a value, found the end of the file") }
                    switch c {
                    case UInt8(ascii: "{"): i += 1; stack.append(.object); step = .firstKeyOrEnd
                    case UInt8(ascii: "["): i += 1; stack.append(.array); step = .firstValueOrEnd
                    case UInt8(ascii: "\""): if let e = string() { return e }; step = .afterValue
                    case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"): if let e = literal() { return e }; step = .afterValue
                    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): if let e = number() { return e }; step = .afterValue
                    default: return (i, "expected a value" + found(c))
                    }
                case .firstKeyOrEnd, .key:
                    if step == .firstKeyOrEnd, c == UInt8(ascii: "}") { i += 1; stack.removeLast(); step = .afterValue; continue }
                    guard c == UInt8(ascii: "\"") else {
                        return (i, (step == .firstKeyOrEnd ? "expected '\"' (a key) or '}'" : "expected '\"' (a key)") + found(c))
                    }
                    if let e = string() { return e }
                    step = .colon
                case .colon:
                    guard c == UInt8(ascii: ":") else { return (i, "expected ':'" + found(c)) }
                    i += 1
                    step = .value
                case .afterValue:
                    guard let top = stack.last else {
                        return c == nil ? nil : (i, "expected the end of the file" + found(c))
                    }
                    let close = top == .object ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    if c == UInt8(ascii: ",") { i += 1; step = top == .object ? .key : .value; continue }
                    if c == close { i += 1; stack.removeLast(); continue }
                    return (i, "expected ',' or '\(Character(UnicodeScalar(close)))'" + found(c))
                }
            }
        }

        private func found(_ c: UInt8?) -> String {
            guard let c else { return ", found the end of the file" }
            if c >= 0x21 && c < 0x7F { return ", found '\(Character(UnicodeScalar(c)))'" }
            return ""
        }

        private mutating func skipSpace() {
            while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 }
        }

        private mutating func string() -> (Int, String)? {
            let start = i
            i += 1
            while i < bytes.count {
                let c = bytes[i]
                if c == UInt8(ascii: "\"") { i += 1; return nil }
                if c < 0x20 { return (i, "a control character (or a line break) inside a string; escape it") }
                if c == UInt8(ascii: "\\") {
                    i += 1
                    guard i < bytes.count else { break }
                    let e = bytes[i]
                    if e == UInt8(ascii: "u") {
                        let hex = bytes[(i + 1)..<min(i + 5, bytes.count)]
                        guard hex.count == 4, hex.allSatisfy({ isHex($0) }) else { return (i - 1, "expected 4 hexadecimal digits after \\u") }
                        i += 5
                        continue
                    }
                    guard Array("\"\\/bfnrt".utf8).contains(e) else { return (i - 1, "an unknown escape in a string") }
                }
                i += 1
            }
            return (start, "a string that is never closed")
        }

        private mutating func literal() -> (Int, String)? {
            for word in ["true", "false", "null"] {
                let w = Array(word.utf8)
                if i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w { i += w.count; return nil }
            }
            return (i, "expected a value (true, false and null are written in lower case, strings in double quotes)")
        }

        private mutating func number() -> (Int, String)? {
            if bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return (i, "expected a digit") }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { return (i, "expected a digit after '.'") }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { return (i, "expected a digit in the exponent") }
            }
            return nil
        }

        private mutating func digits() -> Int {
            let start = i
            while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
            return i - start
        }

        private func isHex(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
        }
    }
}
