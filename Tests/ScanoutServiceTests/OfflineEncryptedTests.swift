import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutOffline
import ScanoutTestSupport
import Testing

/// AES-128 HLS kept offline: the key comes from `scanout serve`'s `/licence/KID` with the content
/// token, is kept sealed for the device, and the asset decrypts to the clear source's frames.
@Suite(.serialized) struct OfflineEncryptedTests {
    @Test func anAES128PlaylistIsKeptWithItsKeySealedAndDecryptsToTheSource() async throws {
        let publisher = try await TokenPublisher()
        let stranger = try await TokenPublisher()
        let key = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let hex = key.map { String(format: "%02x", $0) }.joined()
        let conf = try Scratch()
        try JSONSerialization.data(withJSONObject: ["keys": ["kid1": hex]]).write(to: URL(fileURLWithPath: conf.path("licence-keys.json")))
        let config = try OfflineServeTests.config(conf, ["stateDir": conf.path("state"),
                                                         "offline": ["minFreeBytes": 0, "licenceKeys": conf.path("licence-keys.json")]])
        let server = try ServeProcess(arguments: ["--config", config, "--output", "headless", "--keys", publisher.keyFile])
        // The token names the key it may be handed and the server that hands it: the playlist's
        // key URI is on another origin than the playlist, where the token goes only when it names it.
        let keyServer = "http://127.0.0.1:\(server.port)/licence/{kid}"
        let token = try await publisher.token(keyServer: keyServer, kids: ["kid1"])
        let wrong = try await stranger.token(keyServer: keyServer, kids: ["kid1"])

        // The endpoint: the key for a valid token only.
        #expect(try server.request("GET", "/licence/kid1").status == 401)
        #expect(try server.request("GET", "/licence/kid1", headers: ["Authorization": "Bearer " + wrong]).status == 403)
        #expect(try server.request("GET", "/licence/nope", headers: ["X-Content-Token": token]).status == 404)
        let answer = try server.request("GET", "/licence/kid1", headers: ["Authorization": "Bearer " + token])
        #expect(answer.status == 200 && Array(answer.body) == key)

        // An AES-128 HLS of the counter clip whose key URI is the endpoint.
        let media = try Scratch()
        try Data(key).write(to: URL(fileURLWithPath: media.path("k.bin")))
        try "http://127.0.0.1:\(server.port)/licence/kid1\n\(media.path("k.bin"))\n".write(toFile: media.path("keyinfo"), atomically: true, encoding: .utf8)
        _ = try Proc.ffmpeg(["-i", try Fixtures.path("counter.mp4"), "-c", "copy", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
                             "-hls_key_info_file", media.path("keyinfo"), media.path("enc.m3u8")])
        try FileManager.default.removeItem(atPath: media.path("k.bin"))
        let playlist = try String(contentsOfFile: media.path("enc.m3u8"), encoding: .utf8)
        #expect(playlist.contains("#EXT-X-KEY:METHOD=AES-128"))
        try playlist.replacingOccurrences(of: "AES-128", with: "SAMPLE-AES").write(toFile: media.path("sample.m3u8"), atomically: true, encoding: .utf8)
        let http = try HTTPFileServer.hls(directory: media.url.path)

        let h = try OfflineHarness()
        // Refused: no token, a token the endpoint does not accept, SAMPLE-AES.
        await h.expectRefused([(DownloadRequest(source: http.url("enc.m3u8")), "give the content token"),
                               (DownloadRequest(source: http.url("enc.m3u8"), token: wrong, keyServer: keyServer), "403"),
                               (DownloadRequest(source: http.url("sample.m3u8"), token: token, keyServer: keyServer), "SAMPLE-AES")])

        let added = try await h.manager.add(DownloadRequest(source: http.url("enc.m3u8"), token: token, keyServer: keyServer))
        _ = try await h.wait(added.record.id, for: .completed)
        let local = try #require(h.manager.localInput(for: http.url("enc.m3u8"))).get().source
        #expect(local.hasPrefix("/dev/shm/"), "\(local)")
        #expect(try OfflineHarness.md5s(local) == OfflineHarness.md5s(try Fixtures.path("counter.mp4")))

        // The key is nowhere in the state directory (database, playlist, device key aside), nor
        // in the download's answer.
        let state = h.scratch.path("state")
        let files = FileManager.default.enumerator(atPath: state)?.compactMap { $0 as? String } ?? []
        for f in files where !f.hasSuffix("device.key") {
            guard let data = FileManager.default.contents(atPath: state + "/" + f) else { continue }
            #expect(data.range(of: Data(key)) == nil && !String(decoding: data, as: UTF8.self).contains(Data(key).base64EncodedString()), "\(f)")
        }
        #expect(!"\(try h.manager.statuses())".contains(hex))
        let mode = try FileManager.default.attributesOfItem(atPath: state + "/device.key")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A database rebuilt from the asset's directory keeps the sealed key.
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: state + "/offline.db"))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + "/offline.db" + suffix) }
        let again = try OfflineHarness(scratch: h.scratch)
        let reopened = try #require(again.manager.localInput(for: http.url("enc.m3u8"))).get().source
        #expect(try OfflineHarness.md5s(reopened) == OfflineHarness.md5s(try Fixtures.path("counter.mp4")))
        // Deleted with the asset: the playlist that names the key goes too.
        try await again.manager.remove(added.record.id)
        #expect(!FileManager.default.fileExists(atPath: local))
        #expect(server.terminate() == 0)
    }

    @Test func theTokensKeyServerOverridesThePlaylistsKeyURI() async throws {
        let key = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let media = try Scratch()
        try FileManager.default.createDirectory(atPath: media.path("keys"), withIntermediateDirectories: true)
        try Data(key).write(to: URL(fileURLWithPath: media.path("keys/kid7")))
        // The playlist names a key URI nothing answers; the token names the server that does.
        try "http://127.0.0.1:9/nowhere/kid7\n\(media.path("keys/kid7"))\n".write(toFile: media.path("keyinfo"), atomically: true, encoding: .utf8)
        _ = try Proc.ffmpeg(["-i", try Fixtures.path("counter.mp4"), "-c", "copy", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
                             "-hls_key_info_file", media.path("keyinfo"), media.path("enc.m3u8")])
        let http = try HTTPFileServer.hls(directory: media.url.path)
        let token = try await TokenPublisher().token()
        try http.control("bearer?prefix=/keys&token=\(token)")
        let h = try OfflineHarness()
        let added = try await h.manager.add(DownloadRequest(source: http.url("enc.m3u8"), token: token,
                                                            keyServer: "http://127.0.0.1:\(http.port)/keys/{kid}"))
        _ = try await h.wait(added.record.id, for: .completed)
        #expect(try http.control("log").contains("/keys/kid7"))
        let local = try #require(h.manager.localInput(for: http.url("enc.m3u8"))).get().source
        #expect(try OfflineHarness.md5s(local) == OfflineHarness.md5s(try Fixtures.path("counter.mp4")))
        try await h.manager.remove(added.record.id)
    }
}
