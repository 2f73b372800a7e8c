import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// A content key to fetch before a download is queued.
enum PendingKey {
    /// The `#EXT-X-KEY` of an AES-128 playlist.
    case hls(uri: String, iv: String?, mediaSequence: Int)
    /// The key id of a CENC-encrypted MP4 (32 hexadecimal digits).
    case cenc(kid: String)

    /// What `{kid}` stands for in a key server's URL: the CENC key id, or the last path
    /// component of the playlist's key URI (as written, percent-encoded).
    var kid: String {
        switch self {
        case .cenc(let kid): return kid
        case .hls(let uri, _, _):
            return URLComponents(string: uri)?.percentEncodedPath.split(separator: "/").last.map(String.init) ?? uri
        }
    }

    /// What is encrypted, for refusals.
    var what: String {
        switch self {
        case .hls: return "its segments are encrypted (AES-128)"
        case .cenc(let kid): return "it is encrypted (CENC, key id \(kid))"
        }
    }
}

extension OfflineManager {
    /// The key a file download needs, read from its first video packet (the mov demuxer, over
    /// HTTP): nil for a clear file, or one that cannot be opened now (its integrity check judges
    /// it); a refusal for a scheme other than `cenc` or a container other than MP4.
    func encryptedFileKey(_ source: String) async throws(OfflineError) -> PendingKey? {
        let options = DemuxerOptions(timeoutSeconds: settings.readTimeout)
        let found: ContentEncryption?
        do {
            found = try await offThread { try ContentEncryption.probe(input: source, options: options) }
        } catch {
            logger.notice("offline: \(source) could not be probed for encryption (\(error)); its integrity check will judge it")
            return nil
        }
        guard let found else { return nil }
        guard found.isDecryptable else {
            throw .sourceUnusable(source: source, reason: "it is encrypted with the \(found.scheme) scheme in a \(found.container) container; "
                                  + "only MP4s under the cenc scheme (AES-CTR, one 16-byte key id) are kept: libavformat's mov demuxer decrypts them")
        }
        return .cenc(kid: found.keyIDHex)
    }

    /// The key of an encrypted source, fetched once with the request's content token as bearer
    /// and sealed for this device; never logged. Where from: the token's `keyServer` (`{kid}`
    /// replaced), else the playlist's key URI (AES-128 HLS) when it is on the origin of the
    /// source or of `playlist` (the media playlist that names it), else the service's own
    /// licence keys (CENC, when `offline.licenceKeys` names them); refused otherwise. The token
    /// goes to no other host: a key URI on a third host is refused, naming why.
    func fetchKey(_ pending: PendingKey?, for request: DownloadRequest, id: String, playlist: String) async throws(OfflineError) -> ContentKeyRecord? {
        guard let pending else { return nil }
        let source = request.source
        guard let token = request.token else {
            throw .sourceUnusable(source: source, reason: "\(pending.what): give the content token its key is asked with")
        }
        let from: String
        let fetch: @Sendable () async throws -> [UInt8]
        if let server = request.keyServer {
            from = server.replacingOccurrences(of: "{kid}", with: pending.kid)
            fetch = { [fetcher] in try await fetcher.key(from, token: token) }
        } else if case .hls(let uri, _, _) = pending {
            guard KeyOrigin.same(uri, source) || KeyOrigin.same(uri, playlist) else {
                throw .sourceUnusable(source: source, reason: "its key URI \(uri) is not on the playlist's origin (\(KeyOrigin.of(playlist) ?? playlist)) "
                                      + "and its token names no key server (the keyServer claim): the content token is sent only to the key server "
                                      + "the token names or to the playlist's own origin")
            }
            from = uri
            fetch = { [fetcher] in try await fetcher.key(uri, token: token) }
        } else if let ownLicence {
            from = "the service's licence keys (/licence/\(pending.kid))"
            fetch = { try await ownLicence(pending.kid, token, source) }
        } else {
            throw .sourceUnusable(source: source, reason: "\(pending.what), and neither does its token name a key server (the keyServer claim) "
                                  + "nor does this service keep licence keys (offline.licenceKeys)")
        }
        let bytes: [UInt8]
        do { bytes = try await fetch() } catch {
            throw .sourceUnusable(source: source, reason: "its key could not be fetched from \(from) with the token (\(error))")
        }
        guard bytes.count == 16 else {
            throw .sourceUnusable(source: source, reason: "the key from \(from) is \(bytes.count) bytes, not the 16 of AES-128")
        }
        let sealed = try DeviceKey(directory: store.directory).sealKey(bytes)
        switch pending {
        case .hls(_, let iv, let mediaSequence):
            return ContentKeyRecord(downloadId: id, sealed: sealed, iv: iv, mediaSequence: mediaSequence)
        case .cenc(let kid):
            return ContentKeyRecord(downloadId: id, sealed: sealed, iv: nil, mediaSequence: 0, kid: kid)
        }
    }

    /// What the demuxer opens for download `r`: its file (with its content key, CENC), its local
    /// playlist, or (AES-128) a playlist naming its key, written to memory (`KeyedPlaylists`).
    func playableInput(_ r: DownloadRecord, _ segments: [SegmentRecord]) throws(OfflineError) -> LocalInput {
        let dir = store.directory(of: r.id)
        let k = try store.contentKey(of: r.id)
        guard r.kind == .hls else {
            let path = dir + "/" + segments[0].file
            guard let k else { return LocalInput(source: path) }
            guard let key = ContentKey(bytes: try DeviceKey(directory: store.directory).unseal(k.sealed)) else {
                throw .store("the content key kept for \(r.id) is not 16 bytes; delete the download and download it again")
            }
            return LocalInput(source: path, decryptionKey: key)
        }
        guard let k else { return LocalInput(source: dir + "/index.m3u8") }
        let key = try DeviceKey(directory: store.directory).unseal(k.sealed)
        let iv = k.iv.map { ",IV=" + $0 } ?? ""
        keyedPlaylists.withLock { _ = $0.insert(r.id) }
        return LocalInput(source: try KeyedPlaylists.write(id: r.id, text: { line in
            HLSPlaylist.localText(segments, key: (line + iv, k.mediaSequence), directory: dir)
        }, key: key))
    }

    /// The integrity check of a file download's encryption. A CENC file must have its key, and
    /// the key must decrypt every frame: with a wrong key the mov demuxer hands out garbage
    /// (AES-CTR has no check of its own), which the decoder reports as errors it concealed or
    /// frames it could not make, so every frame is decoded and the damage counted.
    func checkDecryption(_ local: LocalInput, record: DownloadRecord) async throws {
        let source = local.source
        guard let key = local.decryptionKey else {
            if let found = try? await offThread({ try ContentEncryption.probe(input: source) }) {
                throw IntegrityError("it is encrypted (\(found.scheme), key id \(found.keyIDHex)) but no key was kept for it: "
                                     + "delete it and download it again with its content token")
            }
            return
        }
        try await offThread {
            var options = DemuxerOptions()
            options.decryptionKey = key
            var problem: String?
            do {
                let reader = try FrameReader(input: source, demuxerOptions: options)
                let frame = VideoFrame()
                var count = 0
                while try reader.next(into: frame) { count += 1 }
                problem = reader.damage().map { "\($0)" } ?? (count == 0 ? "no frame decoded" : nil)
            } catch {
                problem = "\(error)"
            }
            if let problem {
                throw IntegrityError("its content key does not decrypt it, or it is damaged (\(problem)): the key server answered "
                                     + "another key than the one it was encrypted with, or the file differs from the server's")
            }
        }
    }
}

/// The origin of a URL (RFC 6454: scheme, host and port, the port defaulted), which a content
/// token may be sent to when the token names no key server.
enum KeyOrigin {
    /// `scheme://host:port`, lowercased; nil for a URL with no host.
    static func of(_ url: String) -> String? {
        guard let c = URLComponents(string: url), let scheme = c.scheme?.lowercased(), let host = c.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        let port = c.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }

    static func same(_ a: String, _ b: String) -> Bool {
        guard let x = of(a), let y = of(b) else { return false }
        return x == y
    }
}
