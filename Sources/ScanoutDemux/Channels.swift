import Foundation
import ScanoutCore

/// One channel of a channel list: a live stream (or any input) with a name, found in an M3U
/// playlist or in a SAP announcement.
public struct Channel: Sendable, Equatable {
    public enum Origin: String, Sendable { case m3u, sap }
    /// Stable across restarts and reloads: the M3U entry's `tvg-id`, else `m3u-` and a hash of its
    /// URL; `sap-` and a hash of the announcement's origin and message id hash.
    public var id: String
    public var name: String
    public var group: String?
    public var logo: String?
    public var url: String
    public var origin: Origin

    public init(id: String, name: String, group: String? = nil, logo: String? = nil, url: String, origin: Origin) {
        self.id = id
        self.name = name
        self.group = group
        self.logo = logo
        self.url = url
        self.origin = origin
    }
}

/// FNV-1a, 64 bits, of `text`'s UTF-8 bytes, in hex: a short stable name for a string.
public func fnv1aHex(_ text: String) -> String {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        h ^= UInt64(byte)
        h = h &* 0x100_0000_01b3
    }
    return String(h, radix: 16)
}

/// A channel list that cannot be read.
public enum ChannelListError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The source could not be read at all.
    case unreadable(source: String, reason: String)
    /// Line `line` of `source` is not what an M3U playlist holds there.
    case notM3U(source: String, line: Int, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let s, let r): return "channel list \(s): cannot be read: \(r)"
        case .notM3U(let s, let l, let r): return "channel list \(s): line \(l): \(r) (an M3U playlist starts with #EXTM3U; each #EXTINF line is followed by the channel's URL)"
        }
    }
}

/// IPTV-style M3U playlists: `#EXTM3U`, then for each channel
/// `#EXTINF:-1 tvg-id="…" tvg-name="…" tvg-logo="…" group-title="…",Name` and the URL on the next
/// line. CRLF line ends, a byte-order mark, blank lines, other `#` directives (`#EXTGRP` gives the
/// group of the next entry) and missing attributes are accepted; a URL without `#EXTINF` takes
/// its name from the URL.
public enum M3UPlaylist {
    /// The channels of `text`, read from `source` (named in errors).
    public static func parse(_ text: String, source: String) throws(ChannelListError) -> [Channel] {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = String(first.dropFirst()) }
        guard let headerLine = lines.firstIndex(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else {
            throw .notM3U(source: source, line: 1, reason: "the file is empty")
        }
        let header = lines[headerLine].trimmingCharacters(in: .whitespaces)
        guard header.hasPrefix("#EXTM3U") else {
            throw .notM3U(source: source, line: headerLine + 1, reason: "\"\(header.prefix(40))\" is not #EXTM3U")
        }
        var channels: [Channel] = []
        var info: (line: Int, attributes: [String: String], name: String)?
        var groupDirective: String?
        var ids: [String: Int] = [:]
        for (n, raw) in lines.enumerated().dropFirst(headerLine + 1) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("#EXTINF:") {
                if let info { throw .notM3U(source: source, line: info.line, reason: "#EXTINF without a URL after it") }
                info = try extinf(line, source: source, line: n + 1)
                continue
            }
            if line.hasPrefix("#EXTGRP:") { groupDirective = String(line.dropFirst("#EXTGRP:".count)); continue }
            if line.hasPrefix("#") { continue }
            guard line.contains("://") || line.hasPrefix("/") else {
                throw .notM3U(source: source, line: n + 1, reason: "\"\(line.prefix(40))\" is neither a directive nor a URL or absolute path")
            }
            let attributes = info?.attributes ?? [:]
            var id = attributes["tvg-id"].flatMap { $0.isEmpty ? nil : $0 } ?? "m3u-" + fnv1aHex(line)
            // Two entries with one tvg-id (the same programme in two qualities): the later ones get a suffix.
            ids[id, default: 0] += 1
            if let count = ids[id], count > 1 { id += "-\(count)" }
            let name = info.map(\.name).flatMap { $0.isEmpty ? nil : $0 } ?? attributes["tvg-name"]
                ?? String(line.split(separator: "/").last ?? Substring(line))
            channels.append(Channel(id: id, name: name, group: attributes["group-title"] ?? groupDirective,
                                    logo: attributes["tvg-logo"], url: line, origin: .m3u))
            info = nil
            groupDirective = nil
        }
        if let info { throw .notM3U(source: source, line: info.line, reason: "#EXTINF without a URL after it") }
        return channels
    }

    /// `#EXTINF:<duration> key="value" ...,Name`: the attributes and the name.
    private static func extinf(_ line: String, source: String, line n: Int) throws(ChannelListError) -> (line: Int, attributes: [String: String], name: String) {
        var rest = Substring(line.dropFirst("#EXTINF:".count))
        // The duration: digits and a sign, up to a space or the comma.
        let durationEnd = rest.firstIndex(where: { $0 == " " || $0 == "," }) ?? rest.endIndex
        guard Double(rest[..<durationEnd].trimmingCharacters(in: .whitespaces)) != nil else {
            throw .notM3U(source: source, line: n, reason: "#EXTINF duration \"\(rest[..<durationEnd])\" is not a number")
        }
        rest = rest[durationEnd...]
        var attributes: [String: String] = [:]
        while true {
            rest = rest.drop(while: { $0 == " " })
            guard !rest.isEmpty, rest.first != "," else { break }
            guard let eq = rest.firstIndex(of: "="), !rest[..<eq].contains(" "), !rest[..<eq].contains(",") else {
                throw .notM3U(source: source, line: n, reason: "attribute \"\(rest.prefix(20))\" has no value")
            }
            let key = String(rest[..<eq])
            var value = rest[rest.index(after: eq)...]
            if value.first == "\"" {
                value = value.dropFirst()
                guard let close = value.firstIndex(of: "\"") else {
                    throw .notM3U(source: source, line: n, reason: "the value of \(key) has no closing quote")
                }
                attributes[key] = String(value[..<close])
                rest = value[value.index(after: close)...]
            } else {
                let end = value.firstIndex(where: { $0 == " " || $0 == "," }) ?? value.endIndex
                attributes[key] = String(value[..<end])
                rest = value[end...]
            }
        }
        let name = rest.first == "," ? String(rest.dropFirst()).trimmingCharacters(in: .whitespaces) : ""
        return (n, attributes, name)
    }

    /// Reads and parses the playlist at `source`: a file path, or an http(s) URL (read through
    /// libavformat, within `timeout` seconds).
    public static func load(_ source: String, timeout: Double = 10) throws(ChannelListError) -> [Channel] {
        let bytes: [UInt8]
        if source.contains("://") {
            do {
                bytes = try readWhole(url: source, timeoutSeconds: timeout)
            } catch {
                throw .unreadable(source: source, reason: error.description)
            }
        } else {
            guard let data = FileManager.default.contents(atPath: source) else {
                throw .unreadable(source: source, reason: FileManager.default.fileExists(atPath: source) ? "permission denied" : "no such file")
            }
            bytes = Array(data)
        }
        return try parse(String(decoding: bytes, as: UTF8.self), source: source)
    }
}

/// The channel list a set-top box zaps through: the M3U playlist's channels in their order, then
/// the sessions announced over SAP in the order they were first heard (one whose URL the
/// playlist already lists is not listed twice). A session leaves the list when its announcer
/// deletes it or stops announcing it. A value: its owner applies messages and expiry in order.
public struct ChannelList: Sendable {
    public private(set) var playlist: [Channel]
    /// Seconds after a session's last announcement before it is withdrawn; nil: ten times the
    /// interval between its last two announcements, at least `SAPListenerOptions.minimumTimeout`.
    public var sapTimeout: Double?
    private var sessions: [Session] = []

    private struct Session {
        var key: String
        var channel: Channel
        /// When the last announcement came.
        var lastSeen: ClockTime
        /// Seconds between the last two announcements; nil after the first.
        var interval: Double?
    }

    /// What changed in the list: channels that came, and channels that went with the reason.
    public struct Changes: Sendable, Equatable {
        public var added: [Channel] = []
        public var removed: [(channel: Channel, reason: String)] = []
        public var isEmpty: Bool { added.isEmpty && removed.isEmpty }
        public static func == (a: Self, b: Self) -> Bool {
            a.added == b.added && a.removed.map(\.channel) == b.removed.map(\.channel) && a.removed.map(\.reason) == b.removed.map(\.reason)
        }
    }

    public init(playlist: [Channel] = [], sapTimeout: Double? = nil) {
        self.playlist = playlist
        self.sapTimeout = sapTimeout
    }

    /// Every channel, in order.
    public var channels: [Channel] { playlist + sessions.map(\.channel).filter(listed) }

    public func channel(id: String) -> Channel? { channels.first { $0.id == id } }

    /// The channel `step` places after (before, when negative) the one named `id`, wrapping
    /// around; from no channel (or one no longer listed), the first (or the last). Nil when the
    /// list is empty.
    public func channel(after id: String?, step: Int) -> Channel? {
        let all = channels
        guard !all.isEmpty else { return nil }
        guard let id, let i = all.firstIndex(where: { $0.id == id }) else { return step >= 0 ? all.first : all.last }
        return all[((i + step) % all.count + all.count) % all.count]
    }

    /// Replaces the M3U playlist's channels (the file read again). A channel whose id is gone, or
    /// whose stream changed, is removed (and the new one added); SAP sessions that the old playlist
    /// hid, or the new one hides, come and go with it.
    public mutating func replacePlaylist(_ new: [Channel]) -> Changes {
        let before = channels
        playlist = new
        let after = channels
        var changes = Changes()
        changes.removed = before.filter { !after.contains($0) }.map { ($0, "no longer in the channel playlist") }
        changes.added = after.filter { !before.contains($0) }
        return changes
    }

    /// A SAP session not hidden behind a playlist entry with the same URL.
    private func listed(_ c: Channel) -> Bool { !playlist.contains { $0.url == c.url } }

    /// Takes a SAP message received at `now` (the monotonic clock).
    public mutating func apply(_ m: SAPMessage, at now: ClockTime) -> Changes {
        var changes = Changes()
        let i = sessions.firstIndex { $0.key == m.key }
        if m.kind == .delete {
            if let i {
                let gone = sessions.remove(at: i)
                if listed(gone.channel) { changes.removed.append((gone.channel, "deleted by its announcer (SAP delete from \(m.origin))")) }
            }
            return changes
        }
        guard let session = m.session, let url = session.url else { return changes }
        let name = session.name.isEmpty || session.name == "-" ? url : session.name
        let channel = Channel(id: "sap-" + fnv1aHex(m.key), name: name,
                              group: session.attribute("x-plgroup") ?? session.attribute("cat"), url: url, origin: .sap)
        if let i {
            let previous = sessions[i].lastSeen
            sessions[i].interval = (now - previous).secondsValue
            sessions[i].lastSeen = now
            if sessions[i].channel != channel {
                // A modified session (RFC 2974 §5): the new description replaces the old.
                if listed(sessions[i].channel) { changes.removed.append((sessions[i].channel, "replaced by a new announcement")) }
                sessions[i].channel = channel
                if listed(channel) { changes.added.append(channel) }
            }
        } else {
            sessions.append(Session(key: m.key, channel: channel, lastSeen: now, interval: nil))
            if listed(channel) { changes.added.append(channel) }
        }
        return changes
    }

    /// Withdraws the sessions not announced for their timeout, as of `now`.
    public mutating func expire(at now: ClockTime) -> Changes {
        var changes = Changes()
        var kept: [Session] = []
        for s in sessions {
            let timeout = sapTimeout ?? max(10 * (s.interval ?? 0), SAPListenerOptions.minimumTimeout)
            let silent = (now - s.lastSeen).secondsValue
            guard silent >= timeout else { kept.append(s); continue }
            if listed(s.channel) {
                changes.removed.append((s.channel, String(format: "no announcement for %.1f s (timeout %g s)", silent, timeout)))
            }
        }
        sessions = kept
        return changes
    }
}
