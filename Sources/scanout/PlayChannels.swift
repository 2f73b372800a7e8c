import ArgumentParser
import ScanoutDemux
import ScanoutPlayer

/// `play --channels FILE [--channel ID]`: a channel of an M3U list instead of an input.
struct ChannelOptions: ParsableArguments {
    @Option(help: ArgumentHelp("An M3U channel list (a file or an http(s) URL): play its first channel, or the one --channel names.", valueName: "m3u"))
    var channels: String?
    @Option(help: ArgumentHelp("With --channels: the channel's id (its tvg-id, or the id serve's GET /channels gives) or its name.", valueName: "id"))
    var channel: String?

    func validate() throws {
        if channel != nil && channels == nil { throw ValidationError("--channel needs --channels (the M3U list to find it in)") }
    }

    /// The URL of the channel asked for; nil without `--channels`.
    func url(timeout: Double) throws -> String? {
        guard let channels else { return nil }
        let list = try M3UPlaylist.load(channels, timeout: timeout)
        guard let c = channel.map({ want in list.first { $0.id == want } ?? list.first { $0.name == want } }) ?? list.first else {
            throw ValidationError(channel.map { "--channel: no channel \"\($0)\" in \(channels) (ids: \(list.map(\.id).joined(separator: ", ")))" }
                                  ?? "--channels: \(channels) lists no channel")
        }
        return c.url
    }
}
