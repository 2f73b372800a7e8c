import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutOffline
import ScanoutTestSupport
import Testing

/// CENC (ClearKey) MP4 kept offline: the key id read from the file at `POST /downloads`, the key
/// fetched with the content token from the URL the token names (`keyServer`) or from `scanout
/// serve`'s own `/licence/KID`, kept sealed, and handed to the mov demuxer (`decryption_key`) for
/// that item only; the frames decoded from the store are the clear source's.
@Suite(.serialized) struct OfflineCENCTests {
    /// A CENC (AES-CTR) copy of the counter clip with an AAC track, under `key` and `kid`.
    static func encrypt(into path: String, key: [UInt8], kid: String) throws {
        _ = try Proc.ffmpeg(["-i", try Fixtures.path("counter.mp4"), "-f", "lavfi", "-i", "sine=d=4", "-map", "0:v", "-map", "1:a",
                             "-c:v", "copy", "-c:a", "aac", "-shortest", "-encryption_scheme", "cenc-aes-ctr",
                             "-encryption_key", hex(key), "-encryption_kid", kid, path])
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func random16() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    /// The MD5 of every frame our demuxer (with the input's key) and decoder give.
    static func decodedMD5s(_ local: LocalInput) throws -> [String] {
        var options = DemuxerOptions()
        options.decryptionKey = local.decryptionKey
        let reader = try FrameReader(input: local.source, demuxerOptions: options)
        var sum = FrameChecksum(video: reader.video, formatStartTime: reader.demuxer.formatStartTime)
        let frame = VideoFrame()
        var out: [String] = []
        while try reader.next(into: frame) { out.append(try sum.md5(of: frame).hex) }
        return out
    }

    /// Whether `key` (its bytes, hex or base64) is in `data`.
    static func holds(_ data: Data, _ key: [UInt8]) -> Bool {
        let text = String(decoding: data, as: UTF8.self)
        return data.range(of: Data(key)) != nil || text.contains(hex(key)) || text.contains(Data(key).base64EncodedString())
    }

    /// Files under `directory` (but `device.key`) that hold `key`.
    static func filesHolding(_ key: [UInt8], under directory: String) -> [String] {
        let files = FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []
        return files.filter { f in
            !f.hasSuffix("device.key") && FileManager.default.contents(atPath: directory + "/" + f).map { holds($0, key) } == true
        }
    }

    @Test func theKeyComesFromTheURLTheTokenNamesAndAWrongOneIsCaught() async throws {
        let key = Self.random16()
        let kid = Self.hex(Self.random16())
        let media = try Scratch()
        try Self.encrypt(into: media.path("enc.mp4"), key: key, kid: kid)
        // The same file under the cbcs scheme: its `schm` box says so.
        var bytes = try Data(contentsOf: media.url.appendingPathComponent("enc.mp4"))
        let schm = try #require(bytes.range(of: Data("schm".utf8)))
        let scheme = schm.upperBound + 4
        #expect(bytes[scheme..<scheme + 4] == Data("cenc".utf8))
        bytes.replaceSubrange(scheme..<scheme + 4, with: Data("cbcs".utf8))
        try bytes.write(to: media.url.appendingPathComponent("cbcs.mp4"))
        for (dir, k) in [("keys", key), ("keys-wrong", Self.random16()), ("keys-short", Array(key.prefix(15)))] {
            try FileManager.default.createDirectory(atPath: media.path(dir), withIntermediateDirectories: true)
            try Data(k).write(to: URL(fileURLWithPath: media.path("\(dir)/\(kid)")))
        }
        let http = try HTTPFileServer.hls(directory: media.url.path)
        let publisher = try await TokenPublisher()
        let token = try await publisher.token()
        let other = try await publisher.token(expiresIn: 7200)
        try http.control("bearer?prefix=/keys&token=\(token)")
        let server = "http://127.0.0.1:\(http.port)/keys/{kid}"
        let source = http.url("enc.mp4")

        let h = try OfflineHarness()
        // Refused, each naming why: no token; a token the key server refuses; no key server at
        // all; a 15-byte key; the cbcs scheme.
        await h.expectRefused([(DownloadRequest(source: source, keyServer: server), "give the content token"),
                               (DownloadRequest(source: source, token: other, keyServer: server), "HTTP 403"),
                               (DownloadRequest(source: source, token: token), "keyServer"),
                               (DownloadRequest(source: source, token: token, keyServer: server.replacingOccurrences(of: "/keys/", with: "/keys-short/")),
                                "15 bytes"),
                               (DownloadRequest(source: http.url("cbcs.mp4"), token: token, keyServer: server), "cbcs")])
        #expect(try h.manager.statuses().isEmpty)

        // A wrong key (the key server answers another one): the integrity check fails the download.
        let wrong = try await h.manager.add(DownloadRequest(source: source, token: token,
                                                            keyServer: server.replacingOccurrences(of: "/keys/", with: "/keys-wrong/")))
        let failed = try await h.wait(wrong.record.id, for: .failed)
        #expect(failed.record.reason?.contains("does not decrypt it") == true, "\(failed.record.reason ?? "")")
        #expect(h.manager.localInput(for: source) == nil)
        try await h.manager.remove(wrong.record.id)

        let added = try await h.manager.add(DownloadRequest(source: source, token: token, keyServer: server))
        _ = try await h.wait(added.record.id, for: .completed)
        #expect(try http.control("log").contains("/keys/\(kid)"))
        let local = try #require(h.manager.localInput(for: source)).get()
        #expect(local.source.hasSuffix("/offline/\(added.record.id)/media.mp4") && local.decryptionKey?.bytes == key, "\(local)")
        let decoded = try Self.decodedMD5s(local)
        #expect(decoded == (try OfflineHarness.md5s(try Fixtures.path("counter.mp4"))))
        // Without the key the demuxer hands out what cannot be decoded into the source's frames.
        #expect((try? Self.decodedMD5s(LocalInput(source: local.source))) != decoded)
        // Named nowhere: descriptions, the state directory (the sealed database aside), answers.
        #expect(!"\(local)".contains(Self.hex(key)) && !String(reflecting: local).contains(Self.hex(key)))
        var options = DemuxerOptions()
        options.decryptionKey = local.decryptionKey
        #expect(!"\(options)".contains(Self.hex(key)) && !String(reflecting: options).contains(Self.hex(key)))
        #expect(Self.filesHolding(key, under: h.scratch.path("state")).isEmpty)
        #expect(!"\(try h.manager.statuses())".contains(Self.hex(key)))
        let record = try #require(try h.manager.store.contentKey(of: added.record.id))
        #expect(record.kid == kid && !Self.holds(record.sealed, key))

        // A database rebuilt from the asset's directory keeps the sealed key and its key id.
        let state = h.scratch.path("state")
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: state + "/offline.db"))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + "/offline.db" + suffix) }
        let again = try OfflineHarness(scratch: h.scratch)
        let reopened = try #require(again.manager.localInput(for: source)).get()
        let rebuilt = try again.manager.store.contentKey(of: added.record.id)
        #expect(reopened.decryptionKey == local.decryptionKey && rebuilt?.kid == kid)
    }

    @Test func aClearKeyMP4DownloadedThroughTheAPIPlaysFromTheStore() async throws {
        let publisher = try await TokenPublisher()
        let stranger = try await TokenPublisher()
        let key = Self.random16()
        let kid = Self.hex(Self.random16())
        // The token names the key it may be handed (a key goes only to a token for its content).
        let token = try await publisher.token(kids: [kid])
        let wrong = try await stranger.token(kids: [kid])
        try await offPool {
            let conf = try Scratch()
            try JSONSerialization.data(withJSONObject: ["keys": [kid: Self.hex(key)]]).write(to: URL(fileURLWithPath: conf.path("licence-keys.json")))
            let config = try OfflineServeTests.config(conf, ["stateDir": conf.path("state"),
                                                             "offline": ["minFreeBytes": 0, "licenceKeys": conf.path("licence-keys.json")]])
            let server = try ServeProcess(arguments: ["--config", config, "--output", "headless", "--keys", publisher.keyFile])
            let media = try Scratch()
            try Self.encrypt(into: media.path("enc.mp4"), key: key, kid: kid)
            let http = try HTTPFileServer.hls(directory: media.url.path)
            let source = http.url("enc.mp4")

            // The endpoint answers the key for a valid token only.
            #expect(try server.request("GET", "/licence/\(kid)").status == 401)
            #expect(try server.request("GET", "/licence/\(kid)", headers: ["Authorization": "Bearer " + wrong]).status == 403)
            #expect(Array(try server.request("GET", "/licence/\(kid)", headers: ["X-Content-Token": token]).body) == key)
            // The download needs the token, one the service accepts.
            let bare = try server.request("POST", "/downloads", body: #"{"source": "\#(source)"}"#)
            #expect(bare.status == 422 && (bare.json?["error"] as? String)?.contains("give the content token") == true, "\(bare.text)")
            let refused = try server.request("POST", "/downloads", body: #"{"source": "\#(source)", "token": "\#(wrong)"}"#)
            #expect(refused.status == 403, "\(refused.text)")

            let added = try server.request("POST", "/downloads", body: #"{"source": "\#(source)", "token": "\#(token)"}"#)
            #expect(added.status == 201, "\(added.text)")
            let id = try #require(added.json?["id"] as? String)
            _ = try OfflineServeTests.wait({ try server.request($0, $1) }, id, for: "completed")
            let fetched = try http.control("log").split(separator: "\n").filter { $0 == "/enc.mp4" }.count

            // Played from the store: every frame once, no error, the server not asked again.
            let events = try SSEReader(server.tcp, path: "/events", headers: ["Last-Event-ID": "0"])
            let put = try server.request("PUT", "/playlist", body: #"{"items": [{"source": "\#(source)", "token": "\#(token)"}], "autoplay": true}"#)
            #expect(put.status == 200, "\(put.text)")
            let played = events.read(timeout: 20) { $0.event == "ended" }
            #expect(played.last?.event == "ended")
            #expect(!played.contains { $0.event == "error" }, "\(played.filter { $0.event == "error" }.map(\.data))")
            let stats = try #require(try server.request("GET", "/stats").json)
            #expect(stats["framesPresented"] as? Int == 96 && stats["framesDropped"] as? Int == 0, "\(stats)")
            #expect(try http.control("log").split(separator: "\n").filter { $0 == "/enc.mp4" }.count == fetched)

            // The key is in no file of the state directory (the sealed database aside), no
            // answer, no log line.
            #expect(Self.filesHolding(key, under: conf.path("state")).isEmpty)
            #expect(!Self.holds(Data(try server.request("GET", "/downloads").body), key))
            #expect(!Self.holds(Data(try server.request("GET", "/downloads/\(id)").body), key))
            #expect(server.terminate() == 0)
            #expect(!Self.holds(Data(server.stderr.utf8), key), "\(server.stderr)")
            #expect(server.stderr.contains("offline: \(id) completed"))
        }
    }
}
