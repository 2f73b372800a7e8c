import Foundation
import ScanoutCore
import ScanoutDemux
import Testing

@Suite("M3U channel lists")
struct M3UPlaylistTests {
    static let iptv = """
        #EXTM3U x-tvg-url="http://epg.example/guide.xml"
        #EXTINF:-1 tvg-id="news.uk" tvg-name="News HD" tvg-logo="http://logos.example/news.png" group-title="News",News HD
        udp://239.1.1.1:5000
        #EXTINF:-1 tvg-logo="http://logos.example/sport.png" group-title="Sport",Sport, live
        rtp://239.1.1.2:5002

        #EXTINF:0,Film
        #EXTGRP:Movies
        http://cdn.example/film/index.m3u8
        #EXTINF:-1 tvg-id="news.uk" group-title="News",News SD
        udp://239.1.1.3:5000
        /srv/media/loop.ts
        """

    @Test("attributes, groups, logos, names; ids from tvg-id or a hash of the URL")
    func attributes() throws {
        let c = try M3UPlaylist.parse(Self.iptv, source: "iptv.m3u")
        #expect(c.map(\.name) == ["News HD", "Sport, live", "Film", "News SD", "loop.ts"])
        #expect(c.map(\.group) == ["News", "Sport", "Movies", "News", nil])
        #expect(c.map(\.logo) == ["http://logos.example/news.png", "http://logos.example/sport.png", nil, nil, nil])
        #expect(c.map(\.url) == ["udp://239.1.1.1:5000", "rtp://239.1.1.2:5002", "http://cdn.example/film/index.m3u8",
                                 "udp://239.1.1.3:5000", "/srv/media/loop.ts"])
        #expect(c[0].id == "news.uk")
        // A second entry with the same tvg-id keeps it apart.
        #expect(c[3].id == "news.uk-2")
        #expect(c[1].id == "m3u-" + fnv1aHex("rtp://239.1.1.2:5002"))
        #expect(Set(c.map(\.id)).count == c.count)
        #expect(c.allSatisfy { $0.origin == .m3u })
        // The same text parses to the same ids (they are stable).
        #expect(try M3UPlaylist.parse(Self.iptv, source: "again").map(\.id) == c.map(\.id))
    }

    @Test("CRLF line ends and a byte-order mark read the same as LF")
    func crlfAndBOM() throws {
        let crlf = "\u{FEFF}" + Self.iptv.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try M3UPlaylist.parse(crlf, source: "crlf.m3u") == (try M3UPlaylist.parse(Self.iptv, source: "lf.m3u")))
    }

    @Test("a name from tvg-name when the title is empty; missing attributes are nil")
    func missing() throws {
        let c = try M3UPlaylist.parse("#EXTM3U\n#EXTINF:-1 tvg-name=\"Only\",\nudp://239.0.0.9:1234\n#EXTINF:-1,\nudp://239.0.0.10:1234\n", source: "x")
        #expect(c.map(\.name) == ["Only", "239.0.0.10:1234"])
        #expect(c[1].group == nil && c[1].logo == nil)
    }

    @Test("what is not M3U is refused, the line named")
    func refusals() {
        func error(_ text: String) -> ChannelListError? {
            do { _ = try M3UPlaylist.parse(text, source: "bad.m3u"); return nil } catch { return error }
        }
        #expect(error("<html><body>404</body></html>\n") == .notM3U(source: "bad.m3u", line: 1, reason: "\"<html><body>404</body></html>\" is not #EXTM3U"))
        #expect(error("") == .notM3U(source: "bad.m3u", line: 1, reason: "the file is empty"))
        #expect(error("#EXTM3U\n#EXTINF:-1,A\n#EXTINF:-1,B\nudp://239.0.0.1:1\n") == .notM3U(source: "bad.m3u", line: 2, reason: "#EXTINF without a URL after it"))
        #expect(error("#EXTM3U\n#EXTINF:-1,A\n") == .notM3U(source: "bad.m3u", line: 2, reason: "#EXTINF without a URL after it"))
        #expect(error("#EXTM3U\n#EXTINF:abc,A\nudp://x:1\n") == .notM3U(source: "bad.m3u", line: 2, reason: "#EXTINF duration \"abc\" is not a number"))
        #expect(error("#EXTM3U\n#EXTINF:-1 tvg-id=\"x,A\nudp://x:1\n") == .notM3U(source: "bad.m3u", line: 2, reason: "the value of tvg-id has no closing quote"))
        #expect(error("#EXTM3U\r\n\r\nnot a url\r\n") == .notM3U(source: "bad.m3u", line: 3, reason: "\"not a url\" is neither a directive nor a URL or absolute path"))
        let message = error("[playlist]\nFile1=x\n")?.description ?? ""
        #expect(message.hasPrefix("channel list bad.m3u: line 1:") && message.contains("#EXTM3U"), "\(message)")
    }

    @Test("a file is read; a missing one is named")
    func load() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("m3u-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("list.m3u").path
        try Self.iptv.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try M3UPlaylist.load(file).count == 5)
        #expect(throws: ChannelListError.unreadable(source: file + ".gone", reason: "no such file")) { try M3UPlaylist.load(file + ".gone") }
        // Through libavformat (the path any http(s) URL takes), from a file: URL.
        #expect(try M3UPlaylist.load("file://" + file).count == 5)
    }
}

/// A SAP datagram as an announcer sends it.
func sapDatagram(delete: Bool = false, hash: UInt16, origin: [UInt8] = [10, 0, 0, 7], payloadType: Bool = true, sdp: String) -> [UInt8] {
    [0x20 | (delete ? 0x04 : 0), 0, UInt8(hash >> 8), UInt8(hash & 0xFF)] + origin
        + (payloadType ? Array("application/sdp".utf8) + [0] : []) + Array(sdp.utf8)
}

func sdpText(name: String, address: String, port: Int, transport: String = "udp", group: String? = nil) -> String {
    (["v=0", "o=- 1 1 IN IP4 10.0.0.7", "s=\(name)", "i=about \(name)", "c=IN IP4 \(address)/16", "t=0 0"]
        + (group.map { ["a=x-plgroup:\($0)"] } ?? []) + ["m=video \(port) \(transport) 33", "a=recvonly"]).joined(separator: "\r\n") + "\r\n"
}

@Suite("SAP announcements and the merged channel list")
struct SAPChannelTests {
    @Test("the SAP header and the SDP lines are read")
    func parse() throws {
        let m = try SAPMessage.parse(sapDatagram(hash: 0xBEEF, sdp: sdpText(name: "One", address: "239.1.1.1", port: 5000, group: "Sport")))
        #expect(m.kind == .announce && m.origin == "10.0.0.7" && m.messageIDHash == 0xBEEF && m.payloadType == "application/sdp")
        let s = try #require(m.session)
        #expect(s.name == "One" && s.information == "about One" && s.address == "239.1.1.1" && s.port == 5000 && s.transport == "udp")
        #expect(s.attribute("x-plgroup") == "Sport" && s.attribute("recvonly") == "")
        #expect(s.url == "udp://239.1.1.1:5000")
        // No payload type (the payload starts with v=0), RTP, a media-level address, and SSM.
        let rtp = try SAPMessage.parse(sapDatagram(hash: 1, payloadType: false,
                                                   sdp: "v=0\ns=Two\nc=IN IP4 239.9.9.9\nm=video 5002 RTP/AVP 33\nc=IN IP4 239.2.2.2/1\na=source-filter: incl IN IP4 239.2.2.2 10.0.0.1\n"))
        #expect(rtp.session?.url == "rtp://239.2.2.2:5002?sources=10.0.0.1")
        let delete = try SAPMessage.parse(sapDatagram(delete: true, hash: 0xBEEF, sdp: "v=0\ns=One\n"))
        #expect(delete.kind == .delete && delete.key == m.key)
    }

    @Test("malformed and unsupported datagrams are refused with the reason")
    func refusals() {
        #expect(throws: SAPError.malformed("2 bytes, shorter than a SAP header")) { try SAPMessage.parse([0x20, 0]) }
        #expect(throws: SAPError.malformed("SAP version 2 (1 expected)")) { try SAPMessage.parse([0x40, 0, 0, 0, 1, 2, 3, 4]) }
        #expect(throws: SAPError.unsupported("encrypted payload")) { try SAPMessage.parse([0x22, 0, 0, 0, 1, 2, 3, 4]) }
        #expect(throws: SAPError.unsupported("compressed payload")) { try SAPMessage.parse([0x21, 0, 0, 0, 1, 2, 3, 4]) }
        #expect(throws: SAPError.malformed("SDP without a v= line")) { try SAPMessage.parse(sapDatagram(hash: 2, sdp: "s=x\n")) }
    }

    static let m3u = [Channel(id: "a", name: "A", url: "udp://239.1.1.1:5000", origin: .m3u),
                      Channel(id: "b", name: "B", url: "/srv/b.ts", origin: .m3u)]

    static func announce(_ hash: UInt16, _ name: String, _ address: String, delete: Bool = false) -> SAPMessage {
        try! SAPMessage.parse(sapDatagram(delete: delete, hash: hash, sdp: sdpText(name: name, address: address, port: 5000)))
    }

    @Test("merged: M3U first, then SAP sessions as heard; one with an M3U entry's URL is not listed twice")
    func merged() {
        var list = ChannelList(playlist: Self.m3u)
        let s = UInt64(1_000_000_000)
        let first = list.apply(Self.announce(7, "Seven", "239.1.1.7"), at: ClockTime(nanoseconds: 1 * s))
        let duplicate = list.apply(Self.announce(1, "Dup", "239.1.1.1"), at: ClockTime(nanoseconds: 1 * s))
        let second = list.apply(Self.announce(8, "Eight", "239.1.1.8"), at: ClockTime(nanoseconds: 1 * s))
        let repeated = list.apply(Self.announce(7, "Seven", "239.1.1.7"), at: ClockTime(nanoseconds: 2 * s))
        #expect(first.added.map(\.name) == ["Seven"] && second.added.map(\.name) == ["Eight"])
        // The one behind the M3U entry is not listed, and a repeat changes nothing.
        #expect(duplicate.isEmpty && repeated.isEmpty)
        #expect(list.channels.map(\.name) == ["A", "B", "Seven", "Eight"])
        #expect(list.channels.map(\.origin) == [.m3u, .m3u, .sap, .sap])
        let seven = list.channels[2]
        #expect(seven.id == "sap-" + fnv1aHex("10.0.0.7/7"))
        // Next and previous wrap around; from nothing, the first or the last.
        #expect(list.channel(after: "a", step: 1)?.id == "b")
        #expect(list.channel(after: seven.id, step: 2)?.id == "a")
        #expect(list.channel(after: "a", step: -1)?.name == "Eight")
        #expect(list.channel(after: nil, step: 1)?.id == "a" && list.channel(after: nil, step: -1)?.name == "Eight")
        #expect(ChannelList().channel(after: nil, step: 1) == nil)
        // A delete withdraws the session, with the reason.
        let gone = list.apply(Self.announce(7, "Seven", "239.1.1.7", delete: true), at: ClockTime(nanoseconds: 3 * s))
        #expect(gone.removed.map(\.channel.id) == [seven.id])
        #expect(gone.removed.first?.reason == "deleted by its announcer (SAP delete from 10.0.0.7)")
        #expect(list.channels.map(\.name) == ["A", "B", "Eight"])
    }

    @Test("a session expires after its fixed timeout, or ten times its interval (30 s at least)")
    func expiry() {
        let s = UInt64(1_000_000_000)
        var fixed = ChannelList(sapTimeout: 3)
        _ = fixed.apply(Self.announce(1, "One", "239.1.1.1"), at: ClockTime(nanoseconds: 10 * s))
        let early = fixed.expire(at: ClockTime(nanoseconds: 12 * s))
        #expect(early.isEmpty)
        let r = fixed.expire(at: ClockTime(nanoseconds: 13 * s)).removed
        #expect(r.map(\.channel.name) == ["One"] && r.first?.reason == "no announcement for 3.0 s (timeout 3 s)")
        #expect(fixed.channels.isEmpty)

        var derived = ChannelList()
        _ = derived.apply(Self.announce(1, "One", "239.1.1.1"), at: .zero)
        _ = derived.apply(Self.announce(1, "One", "239.1.1.1"), at: ClockTime(nanoseconds: 5 * s))  // every 5 s: 50 s
        _ = derived.apply(Self.announce(2, "Two", "239.1.1.2"), at: ClockTime(nanoseconds: 5 * s))  // once: 30 s
        let at34 = derived.expire(at: ClockTime(nanoseconds: 34 * s)), at35 = derived.expire(at: ClockTime(nanoseconds: 35 * s))
        let at54 = derived.expire(at: ClockTime(nanoseconds: 54 * s)), at55 = derived.expire(at: ClockTime(nanoseconds: 55 * s))
        #expect(at34.isEmpty && at54.isEmpty)
        #expect(at35.removed.map(\.channel.name) == ["Two"] && at55.removed.map(\.channel.name) == ["One"])
    }
}

@Suite("the SAP listener's socket")
struct SAPListenerSocketTests {
    @Test("an interface that does not exist is refused at start, the interfaces named (the UDP inputs' resolution)")
    func unknownInterface() {
        #expect {
            _ = try SAPListener(options: SAPListenerOptions(interface: "nosuch0"), onMessage: { _ in }, onIdle: {})
        } throws: { e in
            guard case MediaError.openFailed(let input, let reason) = e else { return false }
            return input == "udp://224.2.127.254:9875" && reason.hasPrefix("no interface nosuch0 (interfaces: ") && reason.contains("lo")
        }
    }
}
