import Foundation
import ScanoutOffline
import ScanoutService
import ScanoutTestSupport
import Synchronization
import Testing

/// The offline store's answers and files under attack: one id asked for at once, passwords in
/// source URLs, the modes of what it keeps, the playlists that name keys, the hosts it fetches.
@Suite(.serialized) struct OfflineHardeningTests {
    /// `dir` with the counter clip, served on loopback.
    static func clipServer(_ dir: Scratch) throws -> HTTPFileServer {
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: dir.path("counter.mp4"))
        return try HTTPFileServer.hls(directory: dir.url.path)
    }

    @Test func tenRequestsForOneAssetIDGiveOneCreatedAndConflictsWithoutStoreText() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Scratch()
        let http = try Self.clipServer(clip)
        let source = http.url("counter.mp4")
        let token = try await publisher.token(url: source)
        try await offPool {
            let conf = try Scratch()
            let config = try OfflineServeTests.config(conf, ["stateDir": conf.path("state"), "offline": ["minFreeBytes": 0], "rateLimit": NSNull()])
            let server = try ServeProcess(arguments: ["--config", config, "--output", "headless", "--keys", publisher.keyFile])
            defer { _ = server.terminate() }
            let body = #"{"id": "film", "source": "\#(source)", "token": "\#(token)"}"#
            let answers = Mutex<[HTTPAnswer]>([])
            DispatchQueue.concurrentPerform(iterations: 10) { _ in
                if let a = try? server.request("POST", "/assets", body: body) { answers.withLock { $0.append(a) } }
            }
            let all = answers.withLock { $0 }
            #expect(all.count == 10)
            #expect(all.filter { $0.status == 201 }.count == 1, "\(all.map { "\($0.status) \($0.text)" })")
            #expect(all.filter { $0.status == 409 }.count == 9, "\(all.map { "\($0.status) \($0.text)" })")
            for a in all {
                #expect(!["SQLite", "UNIQUE", "constraint", "download.id"].contains { a.text.contains($0) }, "\(a.text)")
            }
            #expect(all.filter { $0.status == 409 }.allSatisfy { ($0.json?["error"] as? String)?.contains("asset \"film\" is already registered") == true })
        }
    }

    @Test func aPasswordInASourceURLIsInNoListingAndNoLogLine() async throws {
        try await offPool {
            let clip = try Scratch()
        let http = try Self.clipServer(clip)
            let source = "http://viewer:secretpass@127.0.0.1:\(http.port)/counter.mp4"
            let conf = try Scratch()
            try "#EXTM3U\n#EXTINF:-1 tvg-id=\"one\",One\n\(source)\n".write(toFile: conf.path("channels.m3u"), atomically: true, encoding: .utf8)
            let config = try OfflineServeTests.config(conf, ["stateDir": conf.path("state"), "offline": ["minFreeBytes": 0],
                                                             "channels": ["m3u": conf.path("channels.m3u")]])
            let server = try ServeProcess(arguments: ["--config", config, "--output", "headless"])
            let added = try server.request("POST", "/downloads", body: #"{"source": "\#(source)"}"#)
            #expect(added.status == 201 && !added.text.contains("secretpass"), "\(added.text)")
            let id = try #require(added.json?["id"] as? String)
            let done = try OfflineServeTests.wait({ try server.request($0, $1) }, id, for: "completed")
            #expect(done["source"] as? String == "http://***@127.0.0.1:\(http.port)/counter.mp4", "\(done)")
            #expect(done["mediaURL"] as? String == "http://***@127.0.0.1:\(http.port)/counter.mp4", "\(done)")
            let put = try server.request("PUT", "/playlist", body: #"{"items": [{"source": "\#(source)"}], "autoplay": false}"#)
            #expect(put.status == 200, "\(put.text)")
            for path in ["/downloads", "/downloads/\(id)", "/state", "/playlist", "/channels"] {
                let answer = try server.request("GET", path)
                #expect(answer.status == 200 && !answer.text.contains("secretpass") && answer.text.contains("***@127.0.0.1"), "\(path): \(answer.text)")
            }
            #expect(server.terminate() == 0)
            #expect(!server.stderr.contains("secretpass"), "\(server.stderr)")
            #expect(server.stderr.contains("http://***@127.0.0.1"), "\(server.stderr)")
        }
    }

    @Test func theStoreAndItsAssetsAreReadableByTheServiceUserOnly() async throws {
        let clip = try Scratch()
        let http = try Self.clipServer(clip)
        let previous = umask(0o022)
        defer { umask(previous) }
        let h = try OfflineHarness()
        let added = try await h.manager.add(DownloadRequest(source: http.url("counter.mp4"), token: "a-token"))
        _ = try await h.wait(added.record.id, for: .completed)
        let state = h.scratch.path("state")
        func mode(_ path: String) throws -> Int { try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) }
        for dir in [state, state + "/offline", state + "/offline/\(added.record.id)"] {
            let m = try mode(dir)
            #expect(m == 0o700, "\(dir): \(String(m, radix: 8))")
        }
        for file in ["offline.db", "offline.db-wal", "offline.db-shm", "offline/\(added.record.id)/asset.json"]
        where FileManager.default.fileExists(atPath: state + "/" + file) {
            let m = try mode(state + "/" + file)
            #expect(m == 0o600, "\(file): \(String(m, radix: 8))")
        }
        // The token is kept (a resumed download needs it), readable by this user only.
        #expect(try String(contentsOfFile: state + "/offline/\(added.record.id)/asset.json", encoding: .utf8).contains("a-token"))
    }

    @Test func keyPlaylistsGoWhenAnotherItemPlaysAndThoseOfGoneProcessesAreSwept() async throws {
        // Left by a process that is gone, and by a version that wrote them straight in the directory.
        let dead = Process()
        dead.executableURL = URL(fileURLWithPath: "/bin/true")
        try dead.run()
        dead.waitUntilExit()
        let root = "/dev/shm/scanout-\(getuid())"
        try FileManager.default.createDirectory(atPath: root + "/\(dead.processIdentifier)", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        _ = chmod(root, 0o700)
        let stale = root + "/\(dead.processIdentifier)/gone.m3u8", legacy = root + "/legacy-\(UUID().uuidString).m3u8"
        for f in [stale, legacy] { #expect(FileManager.default.createFile(atPath: f, contents: Data("#EXTM3U\n".utf8))) }

        let (media, http) = try LicenceBindingTests.encryptedHLS()
        defer { withExtendedLifetime(media) {} }

        let h = try OfflineHarness()
        #expect(!FileManager.default.fileExists(atPath: stale) && !FileManager.default.fileExists(atPath: root + "/\(dead.processIdentifier)"))
        #expect(!FileManager.default.fileExists(atPath: legacy))

        let added = try await h.manager.add(DownloadRequest(source: http.url("enc.m3u8"), token: "t"))
        _ = try await h.wait(added.record.id, for: .completed)
        let local = try #require(h.manager.localInput(for: http.url("enc.m3u8"))).get().source
        #expect(local == root + "/\(getpid())/\(added.record.id).m3u8")
        #expect(FileManager.default.fileExists(atPath: local))
        // The item itself playing keeps it; another item playing removes it.
        h.manager.played(source: http.url("enc.m3u8"))
        #expect(FileManager.default.fileExists(atPath: local))
        h.manager.played(source: "http://127.0.0.1:9/other.mp4")
        #expect(!FileManager.default.fileExists(atPath: local))
        try await h.manager.remove(added.record.id)
    }

    /// What keeps an encrypted download playing in a service: the media and its server, the
    /// service, and the decrypting playlist it wrote.
    struct PlayingEncrypted {
        let media: Scratch, http: HTTPFileServer, conf: Scratch, server: ServeProcess, written: String
    }

    /// Downloads an AES-128 HLS VOD with its key and plays it in `serve`: its decrypting playlist
    /// is written under /dev/shm.
    func playingEncrypted() async throws -> PlayingEncrypted {
        let (media, http) = try LicenceBindingTests.encryptedHLS()
        let publisher = try await TokenPublisher()
        let source = http.url("enc.m3u8")
        let token = try await publisher.token(url: source)
        return try await offPool {
            let conf = try Scratch()
            let config = try OfflineServeTests.config(conf, ["stateDir": conf.path("state"), "offline": ["minFreeBytes": 0]])
            let server = try ServeProcess(arguments: ["--config", config, "--output", "headless", "--keys", publisher.keyFile])
            let added = try server.request("POST", "/downloads", body: #"{"source": "\#(source)", "token": "\#(token)"}"#)
            #expect(added.status == 201, "\(added.text)")
            let id = try #require(added.json?["id"] as? String)
            _ = try OfflineServeTests.wait({ try server.request($0, $1) }, id, for: "completed")
            let events = try SSEReader(server.tcp, path: "/events", headers: ["Last-Event-ID": "0"])
            let put = try server.request("PUT", "/playlist", body: #"{"items": [{"source": "\#(source)", "token": "\#(token)"}], "autoplay": true}"#)
            #expect(put.status == 200, "\(put.text)")
            _ = events.read(timeout: 20) { $0.event == "prepared" }
            let written = "/dev/shm/scanout-\(getuid())/\(server.pid)/\(id).m3u8"
            #expect(FileManager.default.fileExists(atPath: written))
            return PlayingEncrypted(media: media, http: http, conf: conf, server: server, written: written)
        }
    }

    @Test func theServiceRemovesItsKeyPlaylistsWhenItStops() async throws {
        let p = try await playingEncrypted()
        try await offPool {
            #expect(p.server.terminate() == 0)
            #expect(!FileManager.default.fileExists(atPath: p.written) && !FileManager.default.fileExists(atPath: "/dev/shm/scanout-\(getuid())/\(p.server.pid)"))
        }
    }

    @Test func aStopWithNothingAfterItRemovesTheKeyPlaylist() async throws {
        let p = try await playingEncrypted()
        try await offPool {
            let stopped = try p.server.request("POST", "/stop")
            #expect(stopped.status == 200)
            #expect(!FileManager.default.fileExists(atPath: p.written))
            #expect(p.server.terminate() == 0)
        }
    }

    @Test func downloadsReachNoLoopbackLinkLocalOrUnspecifiedAddressUnlessAllowed() async throws {
        let clip = try Scratch()
        let http = try Self.clipServer(clip)
        let p = http.port
        let open = try OfflineHarness { $0.allowedHosts = HostAllowance() }
        await open.expectRefused([
            (DownloadRequest(source: "http://127.0.0.1:\(p)/counter.mp4"), "127.0.0.1 resolves to 127.0.0.1, a loopback address"),
            (DownloadRequest(source: "http://2130706433:\(p)/counter.mp4"), "2130706433 resolves to 127.0.0.1, a loopback address"),
            (DownloadRequest(source: "http://127.1:\(p)/counter.mp4"), "a loopback address"),
            (DownloadRequest(source: "http://[::1]:\(p)/counter.mp4"), "::1 resolves to ::1, a loopback address"),
            (DownloadRequest(source: "http://[::ffff:127.0.0.1]:\(p)/counter.mp4"), "a loopback address"),
            (DownloadRequest(source: "http://0.0.0.0:\(p)/counter.mp4"), "an unspecified address"),
            (DownloadRequest(source: "http://169.254.169.254/latest/meta-data.m3u8"), "a link-local address"),
            (DownloadRequest(source: "http://[fe80::1]:\(p)/counter.mp4"), "a link-local address"),
        ])
        #expect(!(try http.control("log")).contains("/counter.mp4"), "a refused host was asked")

        let elsewhere = try OfflineHarness { $0.allowedHosts = try! HostAllowance(["10.0.0.0/8", "cdn.example"]) }
        await elsewhere.expectRefused([(DownloadRequest(source: http.url("counter.mp4")), "127.0.0.1 (127.0.0.1) is not in offline.allowedHosts")])

        // Allowed by the list: the number that is loopback, judged by the address it reaches.
        let allowed = try OfflineHarness { $0.allowedHosts = try! HostAllowance(["127.0.0.0/8"]) }
        let added = try await allowed.manager.add(DownloadRequest(source: "http://2130706433:\(p)/counter.mp4"))
        _ = try await allowed.wait(added.record.id, for: .completed)
    }

    /// A loopback server that answers every request with `302 Location: target + path`.
    static func redirector(to target: String, in dir: Scratch) throws -> (BackgroundProcess, UInt16) {
        let script = dir.path("redirect.py")
        try """
            import http.server, sys
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(302)
                    self.send_header("Location", sys.argv[2] + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                do_HEAD = do_GET
                def log_message(self, *args): pass
            http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let port = try refusedLoopbackPort()
        let process = try BackgroundProcess("python3", [script, String(port), target])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? HTTPTestClient.request(.tcp(host: "127.0.0.1", port: port), "HEAD", "/ready"))?.status == 302 { return (process, port) }
            usleep(50_000)
        }
        throw SupportError("the redirecting server did not start")
    }

    @Test func aRedirectIsFollowedOnlyToAnAllowedHost() async throws {
        let clip = try Scratch()
        let http = try Self.clipServer(clip)
        let (toOther, otherPort) = try Self.redirector(to: "http://127.0.0.2:\(http.port)", in: clip)
        let (toClip, clipPort) = try Self.redirector(to: "http://127.0.0.1:\(http.port)", in: clip)
        let h = try OfflineHarness { $0.allowedHosts = try! HostAllowance(["127.0.0.1"]) }
        await h.expectRefused([(DownloadRequest(source: "http://127.0.0.1:\(otherPort)/counter.mp4"),
                                "http://127.0.0.2:\(http.port)/counter.mp4: refused: 127.0.0.2 (127.0.0.2) is not in offline.allowedHosts")])
        #expect(!(try http.control("log")).contains("/counter.mp4"), "the refused host was asked")
        let added = try await h.manager.add(DownloadRequest(source: "http://127.0.0.1:\(clipPort)/counter.mp4"))
        _ = try await h.wait(added.record.id, for: .completed)
        withExtendedLifetime((toOther, toClip)) {}
    }

    @Test func anAllowListMatchesNamesAddressesAndRanges() throws {
        let list = try HostAllowance(["cdn.example", "10.0.0.0/8", "fd00::/8", "192.0.2.7", "127.0.0.1"])
        for allowed in ["https://CDN.example./a.m3u8", "http://10.200.3.4:8080/x", "http://[fd12::1]/x", "http://192.0.2.7/x",
                        "http://[::ffff:10.0.0.1]/x", "http://127.0.0.1:9/x", "http://2130706433/x"] {
            #expect(list.refusal(of: allowed) == nil, "\(allowed)")
        }
        for refused in ["http://11.0.0.1/x", "http://192.0.2.8/x", "http://[fe00::1]/x", "http://127.0.0.2/x", "http://[::1]/x"] {
            #expect(list.refusal(of: refused)?.contains("is not in offline.allowedHosts") == true, "\(refused)")
        }
        #expect(HostAllowance().refusal(of: "http://192.0.2.7/x") == nil)
        #expect(HostAllowance().refusal(of: "http:///x") == "http:///x names no host")
        #expect(throws: HostAllowanceError(index: 1, entry: "a b")) { try HostAllowance(["ok.example", "a b"]) }
    }

    @Test func theAllowListIsCheckedInTheConfig() throws {
        let scratch = try Scratch()
        let path = scratch.path("scanout.json")
        try #"{"offline": {"allowedHosts": ["cdn.example", "10.0.0.0/8", "fd00::/8", "192.0.2.1"]}}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try ServiceConfig.load(file: path).offline.allowedHosts.entries == ["cdn.example", "10.0.0.0/8", "fd00::/8", "192.0.2.1"])
        try #"{"offline": {"allowedHosts": ["cdn.example", "10.0.0.0/33"]}}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigFileError(file: path, message: "offline.allowedHosts[1]: \"10.0.0.0/33\" is not a host name, an IP address or a CIDR range (such as 10.0.0.0/8)")) {
            try ServiceConfig.load(file: path)
        }
    }
}
