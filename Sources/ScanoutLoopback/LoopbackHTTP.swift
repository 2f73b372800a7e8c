import Foundation
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// Where a test reaches a server: TCP on an address, or a Unix socket.
public enum HTTPEndpoint: Sendable {
    case tcp(host: String, port: UInt16)
    case unix(path: String)
}

/// An HTTP/1.1 answer.
public struct HTTPAnswer: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object, nil when it is not one.
    public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
}

/// A minimal blocking HTTP/1.1 client over POSIX sockets (one request per connection), for the
/// service's tests and `bench zap`, which drive `scanout serve` on loopback with no HTTP client
/// library. Handles Content-Length and chunked bodies.
public enum LoopbackHTTP {
    public static func request(_ endpoint: HTTPEndpoint, _ method: String, _ path: String, body: String? = nil,
                               headers: [String: String] = [:], timeout: Double = 10) throws -> HTTPAnswer {
        let fd = try connect(endpoint, timeout: timeout)
        defer { close(fd) }
        try send(fd, requestText(method, path, body: body, headers: headers))
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { data.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 { break }
            if errno == EINTR { continue }
            throw LoopbackHTTPError("HTTP \(method) \(path): read failed or timed out (errno \(errno)) after \(data.count) bytes")
        }
        return try parse(data, what: "\(method) \(path)")
    }

    static func requestText(_ method: String, _ path: String, body: String?, headers: [String: String]) -> String {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        if let body {
            text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            text += "Content-Length: 0\r\n\r\n"
        }
        return text
    }

    static func parse(_ data: Data, what: String) throws -> HTTPAnswer {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { throw LoopbackHTTPError("HTTP \(what): no header end in \(data.count) bytes") }
        let head = String(decoding: data[data.startIndex..<end.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw LoopbackHTTPError("HTTP \(what): bad status line") }
        var headers: [String: String] = [:]
        for l in lines {
            guard let c = l.firstIndex(of: ":") else { continue }
            headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(data[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return HTTPAnswer(status: status, headers: headers, body: body)
    }

    static func dechunk(_ d: Data) -> Data {
        var out = Data()
        var i = d.startIndex
        while i < d.endIndex {
            guard let crlf = d[i...].range(of: Data("\r\n".utf8)) else { break }
            let sizeText = String(decoding: d[i..<crlf.lowerBound], as: UTF8.self).split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size > 0 else { break }
            let start = crlf.upperBound
            let stop = min(d.endIndex, start + size)
            out.append(d[start..<stop])
            i = min(d.endIndex, stop + 2)
        }
        return out
    }

    public static func connect(_ endpoint: HTTPEndpoint, timeout: Double) throws -> Int32 {
        let fd: Int32
        switch endpoint {
        case .tcp(let host, let port):
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw LoopbackHTTPError("socket() failed") }
            setTimeout(fd, timeout)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            addr.sin_addr.s_addr = inet_addr(host)
            let r = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard r == 0 else { close(fd); throw LoopbackHTTPError("cannot connect to \(host):\(port) (errno \(errno))") }
        case .unix(let path):
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw LoopbackHTTPError("socket() failed") }
            setTimeout(fd, timeout)
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { close(fd); throw LoopbackHTTPError("socket path too long: \(path)") }
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in
                for (i, b) in bytes.enumerated() { raw[i] = b }
                raw[bytes.count] = 0
            }
            let r = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard r == 0 else { close(fd); throw LoopbackHTTPError("cannot connect to unix:\(path) (errno \(errno))") }
        }
        return fd
    }

    static func setTimeout(_ fd: Int32, _ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    public static func send(_ fd: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 { if errno == EINTR { continue }; throw LoopbackHTTPError("send failed (errno \(errno))") }
            off += n
        }
    }
}

/// One Server-Sent Events message.
public struct SSEMessage: Sendable {
    public var event: String
    public var id: String?
    public var data: String
    public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] }
}

/// Reads a Server-Sent Events stream as it comes.
public final class SSEReader {
    private let fd: Int32
    private var pending = Data()
    public private(set) var status = 0
    /// Comment lines seen so far (": keep-alive"), without the colon.
    public private(set) var comments: [String] = []
    /// The last `retry:` value seen, in milliseconds.
    public private(set) var retry: Int?

    public init(_ endpoint: HTTPEndpoint, path: String, headers: [String: String] = [:]) throws {
        fd = try LoopbackHTTP.connect(endpoint, timeout: 0.2)
        var text = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        try LoopbackHTTP.send(fd, text + "\r\n")
    }

    deinit { close(fd) }

    /// Messages until `done` returns true for one (included) or `timeout` seconds pass.
    public func read(timeout: Double, until done: (SSEMessage) -> Bool) -> [SSEMessage] {
        var out: [SSEMessage] = []
        let deadline = ClockTime.now() + .seconds(timeout)
        var buffer = [UInt8](repeating: 0, count: 16384)
        while ClockTime.now() < deadline {
            while let m = nextMessage() {
                out.append(m)
                if done(m) { return out }
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { pending.append(contentsOf: buffer[0..<n]) } else if n == 0 { break }
        }
        while let m = nextMessage() { out.append(m) }
        return out
    }

    /// Strips the HTTP head; chunk-size lines of the chunked framing sit between messages and
    /// match no SSE field, so they are skipped. Works on bytes (a String would merge CR LF).
    private func nextMessage() -> SSEMessage? {
        if status == 0, let end = pending.range(of: Data("\r\n\r\n".utf8)) {
            let head = String(decoding: pending[pending.startIndex..<end.lowerBound], as: UTF8.self)
            status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? -1
            pending = Data(pending[end.upperBound...])
        }
        guard status != 0, let blockEnd = pending.range(of: Data("\n\n".utf8)) else { return nil }
        let block = Data(pending[pending.startIndex..<blockEnd.lowerBound])
        pending = Data(pending[blockEnd.upperBound...])
        var event = "message", id: String?, data: [String] = []
        for raw in block.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            var line = String(decoding: raw, as: UTF8.self)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
            else if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
            else if line.hasPrefix("data: ") { data.append(String(line.dropFirst(6))) }
            else if line.hasPrefix("retry: ") { retry = Int(line.dropFirst(7)) }
            else if line.hasPrefix(":") { comments.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces)) }
        }
        if data.isEmpty && id == nil { return nextMessage() }
        return SSEMessage(event: event, id: id, data: data.joined(separator: "\n"))
    }
}

/// What went wrong talking to a loopback server: the request and the cause.
public struct LoopbackHTTPError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A stream connection that carries one message a line (JSON IPC such as mpv's): send a line,
/// read the lines that come. Owns its socket.
public final class LineConnection {
    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects, retrying for `wait` seconds while the server is not there yet.
    public init(_ endpoint: HTTPEndpoint, wait: Double = 10) throws {
        let deadline = ClockTime.now() + .seconds(wait)
        while true {
            do {
                fd = try LoopbackHTTP.connect(endpoint, timeout: 0.2)
                return
            } catch {
                if ClockTime.now() >= deadline { throw error }
                usleep(20_000)
            }
        }
    }

    deinit { close(fd) }

    public func send(line: String) throws {
        try LoopbackHTTP.send(fd, line + "\n")
    }

    /// The next line (without its newline), or nil when `timeout` seconds pass first or the
    /// peer closes.
    public func readLine(timeout: Double) -> String? {
        let deadline = ClockTime.now() + .seconds(timeout)
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            if let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            guard ClockTime.now() < deadline else { return nil }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { pending.append(contentsOf: buffer[0..<n]) } else if n == 0 { return nil }
        }
    }
}

/// A port on 127.0.0.1 free for a socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM` as Int32) at the
/// time of the call: bound once, then closed.
public func unusedLoopbackPort(_ type: Int32) throws -> UInt16 {
    let fd = socket(AF_INET, type, 0)
    guard fd >= 0 else { throw LoopbackHTTPError("socket() failed (errno \(errno))") }
    defer { close(fd) }
    return try bindLoopback(fd)
}

/// Binds `fd` to 127.0.0.1 on an ephemeral port and returns the port.
public func bindLoopback(_ fd: Int32) throws -> UInt16 {
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = 0
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw LoopbackHTTPError("bind(127.0.0.1:0) failed (errno \(errno))") }
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
    }
    guard named == 0 else { throw LoopbackHTTPError("getsockname() failed (errno \(errno))") }
    return UInt16(bigEndian: addr.sin_port)
}
