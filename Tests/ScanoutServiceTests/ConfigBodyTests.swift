import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ScanoutPlayer
@testable import ScanoutService
import Testing

/// The configuration read as the config file, `PUT /config` and `serve`'s options give it
/// (`Wire.ConfigBody`): fields that null clears, fields that refuse null, unknown fields named by
/// their path, the order of the checks, and nothing applied unless everything is accepted.
@Suite struct ConfigBodyTests {
    func config(_ text: String, onto start: ServiceConfig = ServiceConfig(), runtimeOnly: Bool = false) throws(APIError) -> ServiceConfig {
        var c = start
        try c.apply(json: Data(text.utf8), runtimeOnly: runtimeOnly)
        return c
    }

    func refusal(_ text: String, runtimeOnly: Bool = false) -> String? {
        do throws(APIError) {
            _ = try config(text, runtimeOnly: runtimeOnly)
            return nil
        } catch {
            #expect(error.message.hasPrefix((error.field ?? "?") + ": "), "\(error.message): field \(error.field ?? "none")")
            return error.message
        }
    }

    @Test("null clears the fields that may be cleared")
    func nullClears() throws {
        let set = try config(#"""
            {"unixSocket": "/run/s.sock", "rateLimit": {"requestsPerSecond": 5}, "capture": "/tmp", "slate": "s.png",
             "interface": "eth0", "timeshift": {"directory": "/tmp"}, "maxHeight": 720, "maxBitrate": 5000000,
             "channels": {"m3u": "/etc/c.m3u"}}
            """#)
        #expect(set.unixSocket == "/run/s.sock" && set.rateLimit == ServiceConfig.RateLimit(perSecond: 5, burst: 10))
        #expect(set.capture == "/tmp" && set.slate == "s.png" && set.live.interface == "eth0" && set.timeshift.directory == "/tmp")
        #expect(set.adaptive.maxHeight == 720 && set.adaptive.maxBitrate == 5_000_000 && set.channels.m3u == "/etc/c.m3u")
        let cleared = try config(#"""
            {"unixSocket": null, "rateLimit": null, "capture": null, "slate": null, "interface": null,
             "timeshift": {"directory": null}, "maxHeight": null, "maxBitrate": null, "channels": null, "overlay": null}
            """#, onto: set)
        #expect(cleared.unixSocket == nil && cleared.rateLimit == nil && cleared.capture == nil && cleared.slate == nil)
        #expect(cleared.live.interface == nil && cleared.timeshift.directory == nil && cleared.overlay == nil)
        #expect(cleared.adaptive.maxHeight == nil && cleared.adaptive.maxBitrate == nil && cleared.channels.isEmpty)
        // Left out, they stay as they are.
        #expect(try config(#"{"port": 9000}"#, onto: set).unixSocket == "/run/s.sock")
        #expect(try config(#"{"port": 9000}"#, onto: set).adaptive.maxHeight == 720)
    }

    @Test("null is refused where it is no value of the field", arguments: [
        (#"{"host": null}"#, "host: must not be null"),
        (#"{"port": null}"#, "port: must not be null"),
        (#"{"allowedHosts": null}"#, "allowedHosts: must not be null"),
        (#"{"playlist": null}"#, "playlist: must not be null"),
        (#"{"aid": null}"#, "aid: must not be null"),
        (#"{"limits": null}"#, "limits: must not be null"),
        (#"{"timeshift": null}"#, "timeshift: must not be null"),
        (#"{"rateLimit": {"requestsPerSecond": null}}"#, "rateLimit.requestsPerSecond: must not be null"),
        (#"{"channels": {"sap": null}}"#, "channels.sap: must not be null"),
        (#"{"offline": null}"#, "offline: must be true, false or an object {keepAll, concurrentDownloads, minFreeBytes, maxHeight, maxBitrate, licenceKeys, allowedHosts}"),
        // These are read only when given a value: a null one is a field nothing read.
        (#"{"mode": null}"#, "mode: unknown field"),
        (#"{"alang": null}"#, "alang: unknown field"),
        (#"{"presentLog": null}"#, "presentLog: unknown field"),
    ])
    func nullRefused(text: String, message: String) {
        #expect(refusal(text) == message, "\(text)")
    }

    @Test("an unknown field is named by its path, after the known fields are checked", arguments: [
        (#"{"colour": "red"}"#, "colour: unknown field"),
        (#"{"rateLimit": {"requestsPerSecond": 1, "burstiness": 2}}"#, "rateLimit.burstiness: unknown field"),
        (#"{"channels": {"sap": {"address": "239.1.1.1", "ttl": 1}}}"#, "channels.sap.ttl: unknown field"),
        (#"{"offline": {"keepAll": true, "quota": 1}}"#, "offline.quota: unknown field"),
        (#"{"buffering": {"readAhead": 5, "ahead": 1}}"#, "buffering.ahead: unknown field"),
        (#"{"subtitles": {"enabled": true, "size": 3}}"#, "subtitles.size: unknown field"),
        (#"{"playlist": ["a.mp4", {"source": "b.mp4", "volume": 3}]}"#, "playlist[1].volume: unknown field"),
        (#"{"aaa": 1, "port": 70000}"#, "port: must be within 0...65535 (got 70000)"),
        (#"{"zzz": 1, "limits": {"connections": 10, "x": 1}}"#, "limits.x: unknown field"),
    ])
    func unknownFields(text: String, message: String) {
        #expect(refusal(text) == message, "\(text)")
    }

    @Test("booleans, numbers, strings and lists are told apart, each refusal naming the element", arguments: [
        (#"{"autoplay": 1}"#, "autoplay: must be true or false"),
        (#"{"port": true}"#, "port: must be a number"),
        (#"{"port": "80"}"#, "port: must be a number"),
        (#"{"threads": 2.5}"#, "threads: must be an integer"),
        (#"{"host": 5}"#, "host: must be a string"),
        (#"{"host": ""}"#, "host: must not be empty"),
        (#"{"allowedHosts": ["a", 3]}"#, "allowedHosts[1]: must be a host name or address"),
        (#"{"allowedHosts": "a"}"#, "allowedHosts: must be an array"),
        (#"{"sources": [""]}"#, "sources[0]: must be a sender's address"),
        (#"{"channels": {"sap": 1}}"#, "channels.sap: must be an object"),
        (#"{"channels": {"m3u": ""}}"#, "channels.m3u: must be a file path or an http(s) URL"),
        (#"{"offline": 1}"#, "offline: must be true, false or an object {keepAll, concurrentDownloads, minFreeBytes, maxHeight, maxBitrate, licenceKeys, allowedHosts}"),
        (#"{"offline": {"allowedHosts": ["a", 1]}}"#, "offline.allowedHosts: must be an array of host names, addresses or CIDR ranges"),
        (#"{"maxHeight": 0}"#, "maxHeight: must be within 1...16384 (got 0)"),
        (#"{"outputSize": "1920"}"#, #"outputSize: must be WIDTHxHEIGHT, e.g. 1920x1080 (got "1920")"#),
        (#"{"mode": "1080p"}"#, #"mode: must be WIDTHxHEIGHT or WIDTHxHEIGHT@REFRESH, e.g. 1920x1080@60 (got "1080p")"#),
        (#"{"stateDir": "state"}"#, #"stateDir: must be an absolute directory path (got "state")"#),
        (#"{"repeat": "twice"}"#, #"repeat: must be one of none, one, all (got "twice")"#),
        (#"{"capture": ""}"#, "capture: must be a directory, or null for none"),
        (#"{"subtitles": {"safeMargin": 1.5}}"#, "subtitles.safeMargin: must be a fraction below 1 (0.05) or whole pixels (48)"),
        ("[]", "body: must be a JSON object"),
    ])
    func typesAreToldApart(text: String, message: String) {
        #expect(refusal(text) == message, "\(text)")
    }

    @Test("the fields are checked in the order the config lists them: the first mistake is named")
    func order() {
        #expect(refusal(#"{"limits": {"connections": 0}, "volume": 101, "host": ""}"#) == "host: must not be empty")
        #expect(refusal(#"{"limits": {"connections": 0}, "volume": 101}"#) == "volume: must be within 0...100 (got 101)")
    }

    @Test("runtimeOnly: a field that takes a restart is refused first, the first in byte order named")
    func runtimeOnly() throws {
        #expect(refusal(#"{"volume": 500, "port": "x", "host": 5}"#, runtimeOnly: true)
                == "host: cannot change at run time (restart the service with a new config)")
        #expect(refusal(#"{"mode": null}"#, runtimeOnly: true) == "mode: cannot change at run time (restart the service with a new config)")
        #expect(refusal(#"{"volume": 500}"#, runtimeOnly: true) == "volume: must be within 0...100 (got 500)")
        let c = try config(#"{"volume": 30, "mute": true, "scaling": "fill", "repeat": "all", "subtitles": {"delay": 1}}"#, runtimeOnly: true)
        #expect(c.audio.volume == 30 && c.audio.muted && c.scaling == .fill && c.repeatMode == .all && c.subtitles.delay == 1)
    }

    @Test("nothing is applied unless every field is accepted")
    func allOrNothing() {
        var c = ServiceConfig()
        #expect(throws: APIError.badRequest("port", "must be within 0...65535 (got 70000)")) {
            try c.apply(json: Data(#"{"scaling": "fill", "port": 70000}"#.utf8), runtimeOnly: false)
        }
        #expect(c == ServiceConfig())
    }

    @Test("the fields given are listed for the log, null ones too, in byte order")
    func given() throws {
        let body = try RequestDecoder.decode(Wire.ConfigBody.self, json: Data(#"{"volume": 3, "slate": null, "logLevel": "debug"}"#.utf8))
        #expect(body.given == ["logLevel", "slate", "volume"])
        #expect(try RequestDecoder.decode(Wire.ConfigBody.self, json: Data("{}".utf8)).given.isEmpty)
    }

    @Test("PUT /config: unknown fields first, then restart fields, then each field; a refusal changes nothing")
    func putConfig() async throws {
        let service = try await InProcessService(keys: nil)
        defer { service.player.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            func put(_ text: String) async throws -> (status: Int, json: [String: Any]) {
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                return try await client.execute(uri: "/config", method: .put, headers: headers, body: ByteBuffer(string: text)) { response in
                    (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any] ?? [:])
                }
            }
            let cases: [(String, String)] = [
                (#"{"volume": 500, "zzz": 1}"#, "zzz: unknown field"),
                (#"{"volume": 500, "host": "x"}"#, "host: cannot change at run time (restart the service with a new config)"),
                (#"{"scaling": "fill", "volume": 500}"#, "volume: must be within 0...100 (got 500)"),
                (#"{"subtitles": {"margin": 1}}"#, "subtitles.margin: unknown field"),
                (#"{"volume": null}"#, "volume: must not be null"),
                ("", "body: a JSON object is required"),
                (#"{"volume": 1"#, "body: malformed JSON at line 1, column 13: expected ',' or '}', found the end of the file"),
            ]
            for (text, message) in cases {
                let a = try await put(text)
                #expect(a.status == 400 && a.json["error"] as? String == message, "\(text): \(a.status) \(a.json)")
            }
            #expect(try await service.request(client, .get, "/config").json["scaling"] as? String == "fit")
            let ok = try await put(#"{"scaling": "fill", "volume": 40, "slate": null}"#)
            #expect(ok.status == 200 && ok.json["scaling"] as? String == "fill" && ok.json["volume"] as? Int == 40, "\(ok.json)")
            #expect(service.api.currentConfig.scaling == .fill && service.api.currentConfig.audio.volume == 40)
        }
    }
}
