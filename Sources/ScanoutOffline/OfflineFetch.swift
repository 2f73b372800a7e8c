import AsyncHTTPClient
import Foundation
import ScanoutCore
import Synchronization

/// A transfer that stopped short; the download tries again from the bytes on disk.
enum FetchError: Error, CustomStringConvertible {
    case status(url: String, code: UInt)
    /// The body ended with fewer (or more) bytes than the server announced.
    case lengthMismatch(url: String, announced: Int64, received: Int64)
    case stalled(url: String, seconds: Double)
    case transport(url: String, reason: String)
    case write(path: String, reason: String)
    /// The host is not one downloads and key fetches may reach (`HostAllowance`), or a key
    /// request would hand the token to a host it is not meant for.
    case refused(url: String, reason: String)

    var description: String {
        switch self {
        case .status(let u, let c): return "\(u): HTTP \(c)"
        case .lengthMismatch(let u, let a, let r):
            return "\(u): the server announced \(a) bytes and sent \(r)"
        case .stalled(let u, let s): return "\(u): no data for \(Int(s)) s"
        case .transport(let u, let r): return "\(u): \(r)"
        case .write(let p, let r): return "\(p): \(r)"
        case .refused(let u, let r): return "\(u): refused: \(r)"
        }
    }

    /// A full disk is not worth retrying.
    var isDiskFull: Bool {
        if case .write(_, let r) = self { return r.contains("No space left") }
        return false
    }

    /// Not worth retrying: a full disk, a refused host.
    var isPermanent: Bool {
        if case .refused = self { return true }
        return isDiskFull
    }
}

/// HTTP transfers of the offline store: small documents whole, media into files with resume by
/// `Range`. Every request, and every redirect it is sent on, goes only to a host `allowance`
/// allows (checked on the addresses the host resolves to); a redirect to another origin drops the
/// `Authorization` a key request carries.
struct Fetcher: Sendable {
    var readTimeout: Double
    var allowance = HostAllowance()

    /// The process's client for the store: the shared client's settings, but redirects handed
    /// back (`execute` follows them, each one checked). Never shut down: it lives as long as
    /// the process, as `HTTPClient.shared` does.
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Why `url` may not be fetched (`HostAllowance.refusal`, resolved off the cooperative pool).
    func check(_ url: String) async throws {
        let allowance = allowance
        if let reason = try await offThread({ allowance.refusal(of: url) }) { throw FetchError.refused(url: url, reason: reason) }
    }

    /// `request` sent to an allowed host, its redirects (at most 10) followed to allowed hosts.
    private func execute(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        var request = request
        for _ in 0...10 {
            try await check(request.url)
            let response = try await Self.client.execute(request, timeout: .seconds(Int64(readTimeout)))
            guard [301, 302, 303, 307, 308].contains(response.status.code), let location = response.headers.first(name: "Location") else {
                return response
            }
            guard let next = URL(string: location, relativeTo: URL(string: request.url))?.absoluteString,
                  next.hasPrefix("http://") || next.hasPrefix("https://") else {
                throw FetchError.refused(url: request.url, reason: "redirected to \"\(location)\", which is not an http or https URL")
            }
            if !KeyOrigin.same(request.url, next) { request.headers.remove(name: "Authorization") }
            request.url = next
        }
        throw FetchError.transport(url: request.url, reason: "more than 10 redirects")
    }

    /// A playlist, whole (at most 4 MiB).
    func text(_ url: String) async throws -> String {
        let response = try await execute(HTTPClientRequest(url: url))
        guard response.status.code == 200 else { throw FetchError.status(url: url, code: response.status.code) }
        let body = try await response.body.collect(upTo: 4 << 20)
        return String(decoding: body.readableBytesView, as: UTF8.self)
    }

    /// A content key (16 bytes) from a licence endpoint, asked with the content token as bearer.
    func key(_ url: String, token: String) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer " + token)
        let response = try await execute(request)
        guard response.status.code == 200 else { throw FetchError.status(url: url, code: response.status.code) }
        let body = try await response.body.collect(upTo: 64)
        return Array(body.readableBytesView)
    }

    /// The announced length of `url` (HEAD), nil when the server does not say.
    func length(_ url: String) async throws -> Int64? {
        var request = HTTPClientRequest(url: url)
        request.method = .HEAD
        let response = try await execute(request)
        guard response.status.code == 200 else { throw FetchError.status(url: url, code: response.status.code) }
        return response.headers.first(name: "Content-Length").flatMap { Int64($0) }
    }

    /// Downloads `url` into `path`, continuing after the bytes already there (`Range`; a server
    /// that answers 200 instead sends the whole file again). `progress` hears every chunk's
    /// size. Returns the file's full length as the server announced it; the file then holds
    /// exactly that many bytes, or this throws.
    func file(_ url: String, to path: String, progress: @escaping @Sendable (Int64) -> Void) async throws -> Int64 {
        let have = fileSize(path) ?? 0
        var request = HTTPClientRequest(url: url)
        if have > 0 { request.headers.add(name: "Range", value: "bytes=\(have)-") }
        let response: HTTPClientResponse
        do {
            response = try await execute(request)
        } catch let e as FetchError {
            throw e
        } catch {
            throw FetchError.transport(url: url, reason: "\(error)")
        }
        guard let (start, total) = try resumePoint(response, url: url, path: path, have: have) else { return have }
        guard FileManager.default.fileExists(atPath: path) || FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw FetchError.write(path: path, reason: "cannot be opened for writing")
        }
        defer { try? handle.close() }
        do {
            try handle.truncate(atOffset: UInt64(start))
            try handle.seek(toOffset: UInt64(start))
        } catch {
            throw FetchError.write(path: path, reason: "\(error)")
        }
        try await receive(response.body, into: handle, url: url, path: path, progress: progress)
        do { try handle.synchronize() } catch { throw FetchError.write(path: path, reason: "fsync: \(error)") }
        let size = fileSize(path) ?? 0
        guard let total else { return size }
        guard size == total else { throw FetchError.lengthMismatch(url: url, announced: total, received: size) }
        return total
    }

    /// Where the answer to a request for bytes `have`- puts the transfer: the offset to write
    /// from and the file's full length (nil when the server does not say); nil when the file is
    /// already whole.
    private func resumePoint(_ response: HTTPClientResponse, url: String, path: String, have: Int64) throws -> (start: Int64, total: Int64?)? {
        let announced = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
        switch response.status.code {
        case 206:
            // Content-Range: bytes FIRST-LAST/TOTAL
            let range = response.headers.first(name: "Content-Range") ?? ""
            let numbers = range.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
            guard numbers.count == 3, numbers[0] == have else {
                throw FetchError.transport(url: url, reason: "unexpected Content-Range \"\(range)\" for bytes=\(have)-")
            }
            return (have, numbers[2])
        case 200:
            return (0, announced)
        case 416 where have > 0:
            // Nothing after what is there: the file is whole when the server's length agrees.
            let range = response.headers.first(name: "Content-Range") ?? ""
            if let all = range.split(separator: "/").last.flatMap({ Int64($0) }), all == have { return nil }
            truncate(path, 0)
            throw FetchError.transport(url: url, reason: "the server refused bytes=\(have)- (\(range)); starting again")
        default:
            throw FetchError.status(url: url, code: response.status.code)
        }
    }

    /// Writes `body` into `handle` as it comes, telling `progress` each chunk's size; gives up
    /// when no byte came for the read timeout.
    private func receive(_ body: HTTPClientResponse.Body, into handle: FileHandle, url: String, path: String,
                         progress: @escaping @Sendable (Int64) -> Void) async throws {
        let received = LastRead()
        let timeout = readTimeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await chunk in body {
                        do {
                            try handle.write(contentsOf: Data(chunk.readableBytesView))
                        } catch {
                            throw FetchError.write(path: path, reason: (error as NSError).localizedDescription + " \(error)")
                        }
                        received.touch()
                        progress(Int64(chunk.readableBytes))
                    }
                } catch let e as FetchError {
                    throw e
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    throw FetchError.transport(url: url, reason: "\(error)")
                }
            }
            group.addTask {
                // The read timeout: the transfer is given up when no byte came for `timeout`.
                while true {
                    try await Task.sleep(for: .milliseconds(250))
                    let idle = received.idleSeconds
                    if idle > timeout { throw FetchError.stalled(url: url, seconds: idle) }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// When a transfer last received bytes (the read timeout's clock).
private final class LastRead: Sendable {
    private let last = Mutex(ClockTime.now())
    func touch() { last.withLock { $0 = ClockTime.now() } }
    var idleSeconds: Double { (ClockTime.now() - last.withLock { $0 }).secondsValue }
}
