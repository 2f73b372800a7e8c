import Foundation
import ScanoutAudio
import ScanoutDecode
import ScanoutDemux
import ScanoutPlayer

// `GET /version`, `/health`, `/state` (also the answer of the transport and playlist commands and
// the event stream's `state`), `/stats`.

extension Wire {
    struct Version: Encodable, Sendable {
        var name = "scanout"
        var version: String
    }

    struct Health: Encodable, Sendable {
        var up: Bool
        var reasons: [String]
        var state: String

        init(_ s: PlayerSnapshot) {
            up = s.reasons.isEmpty
            reasons = s.reasons.names
            state = s.state.rawValue
        }
    }

    /// The player's state; every string in it redacted (`String.redacted`).
    struct State: Encodable, Sendable {
        var state: String
        @Nullable var item: Int?
        var position: Double
        @Nullable var duration: Double?
        var rate: Double
        var `repeat`: String
        var output: String
        /// "on" or "off" (`POST /display`).
        var display: String
        var serviceUp: Bool
        var reasons: [String]
        @Nullable var bufferingReason: String?
        var live: Bool
        @Nullable var liveDuration: Double?
        @Nullable var timeshift: Timeshift?
        var playlist: [Item]
        @Nullable var lastError: Failure?
        @Nullable var buffer: Buffer?
        @Nullable var subtitles: SubtitleStatus?
        var tracks: [Track]
        /// The current item's video colour; null with no item (or an audio-only one).
        @Nullable var colour: Colour?
        /// How each KMS output shows the content's colour, by output name: HDR signalled, or
        /// tone mapped to SDR and why; empty headless.
        var outputColours: [String: String]
        /// The channel tuned, in the answers of the channel commands only.
        var channel: Channel?
        /// In the answer of `PUT /rate` above 2x only.
        var warning: String?

        init(_ s: PlayerSnapshot) {
            state = s.state.rawValue
            item = s.index
            position = s.position
            duration = s.duration
            rate = s.rate
            self.repeat = s.repeatMode.rawValue
            output = s.output.redacted
            display = s.displayOn ? "on" : "off"
            serviceUp = s.reasons.isEmpty
            reasons = s.reasons.names
            bufferingReason = s.bufferingReason?.redacted
            live = s.live
            liveDuration = s.timeshift?.liveDuration
            timeshift = s.timeshift.map(Timeshift.init)
            playlist = s.playlist.map(Item.init)
            lastError = s.lastFailure.map(Failure.init)
            buffer = s.buffer.map(Buffer.init)
            subtitles = s.subtitles.map(SubtitleStatus.init)
            tracks = s.tracks.filter { $0.kind == .audio || $0.kind == .subtitle }.map { Track($0, selected: s.selectedTracks.contains($0.index)) }
            colour = s.video.flatMap { $0.width > 0 ? Colour($0) : nil }
            outputColours = s.outputColours
        }
    }

    struct Timeshift: Encodable, Sendable {
        var start: Double
        var end: Double
        var position: Double
        var behindLive: Double

        init(_ t: TimeshiftStatus) {
            start = t.start
            end = t.end
            position = t.position
            behindLive = t.behindLive
        }
    }

    /// The last item that failed.
    struct Failure: Encodable, Sendable {
        @Nullable var item: Int?
        @Nullable var source: String?
        var message: String
        var skipped: Bool

        init(_ f: ItemFailure) {
            item = f.item
            source = f.source?.redacted
            message = f.message.redacted
            skipped = f.skipped
        }
    }

    /// How the current item's source is buffered: the policy (`pause`: read ahead, the clock
    /// waits when it runs dry; `slip`: live; `direct`: a local file), the read-ahead's level
    /// (null without a read-ahead), and the waits so far.
    struct Buffer: Encodable, Sendable {
        var policy: String
        var waits: Int
        var waitSeconds: Double
        var networkLateFrames: Int
        @Nullable var seconds: Double?
        @Nullable var bytes: Int?
        @Nullable var packets: Int?
        @Nullable var ended: Bool?
        @Nullable var inputBytesPerSecond: Double?

        init(_ b: BufferStatus) {
            policy = b.policy.rawValue
            waits = b.waits
            waitSeconds = b.waitSeconds
            networkLateFrames = b.networkLateFrames
            seconds = b.level?.seconds
            bytes = b.level?.bytes
            packets = b.level?.packets
            ended = b.level?.ended
            inputBytesPerSecond = b.level?.inputBytesPerSecond
        }
    }

    /// One audio or subtitle track of the current item (`sampleRate`, `channels`: audio only).
    struct Track: Encodable, Sendable {
        var index: Int
        var kind: String
        var codec: String
        @Nullable var language: String?
        @Nullable var title: String?
        var `default`: Bool
        var forced: Bool
        var selected: Bool
        var sampleRate: Int?
        var channels: Int?

        init(_ t: TrackInfo, selected: Bool) {
            index = t.index
            kind = t.kind.rawValue
            codec = t.codecName.redacted
            language = t.language?.redacted
            title = t.title?.redacted
            self.default = t.isDefault
            forced = t.isForced
            self.selected = selected
            if t.kind == .audio {
                sampleRate = t.sampleRate
                channels = t.channels
            }
        }
    }

    struct Stats: Encodable, Sendable {
        var framesDecoded: Int
        var framesPresented: Int
        var framesDropped: Int
        var liveSlips: Int
        var liveSlipSeconds: Double
        var bytesRead: Int
        var decodeErrors: Int
        var itemsFailed: Int
        var framesCensored: [String: Int]
        var pacingP50Ms: Double
        var pacingP99Ms: Double
        var decodeMsPerFrame: Double
        var presentMsPerFrame: Double
        var cpuCopiesPerFrame: Double
        var transfers: Transfers
        var transport: [String: Transport]
        @Nullable var buffer: Buffer?
        @Nullable var audio: AudioOutput?
        @Nullable var adaptive: Adaptive?
        /// On a screen of zones: the screen's composes and each zone's own figures (the fields
        /// above are the main zone's); absent on a screen of one picture.
        var screen: ScreenStats?
        var zones: [ZoneStats]?
        /// The fleet's broker (config `mqtt`); left out without one.
        var mqtt: FleetStats?

        init(_ s: PlayerSnapshot) {
            framesDecoded = s.framesDecoded
            framesPresented = s.framesPresented
            framesDropped = s.framesDropped
            liveSlips = s.liveSlips
            liveSlipSeconds = s.liveSlipSeconds
            bytesRead = s.bytesRead
            decodeErrors = s.decodeErrors
            itemsFailed = s.itemsFailed
            framesCensored = s.framesCensored
            pacingP50Ms = s.pacingP50Ms
            pacingP99Ms = s.pacingP99Ms
            decodeMsPerFrame = s.decodeMsPerFrame
            presentMsPerFrame = s.presentMsPerFrame
            cpuCopiesPerFrame = s.transfers.cpuCopiesPerFrame(s.framesPresented)
            transfers = Transfers(downloads: s.transfers.downloads, uploads: s.transfers.uploads,
                                  gpuCopies: s.transfers.gpuCopies, imports: s.transfers.imports)
            transport = s.transport.mapValues(Transport.init)
            buffer = s.buffer.map(Buffer.init)
            audio = s.audioOutput.map(AudioOutput.init)
            adaptive = s.adaptive.map(Adaptive.init)
        }
    }

    /// A screen of zones: the canvas and the frames composed onto the output so far.
    struct ScreenStats: Encodable, Sendable {
        var width: Int
        var height: Int
        var composed: Int
    }

    /// One zone's figures, as `/stats` gives the main zone's, with its id and its picture watch.
    struct ZoneStats: Encodable, Sendable {
        var id: String
        var stats: Stats
        var picture: Picture
    }

    struct Transfers: Encodable, Sendable {
        var downloads: Int
        var uploads: Int
        var gpuCopies: Int
        var imports: Int
    }

    /// A live input's transport-stream counts.
    struct Transport: Encodable, Sendable {
        var packets: Int
        var ccErrors: Int
        var discontinuities: Int
        var rtpPacketsLost: Int
        var resyncs: Int

        init(_ t: TSCounts) {
            packets = t.packets
            ccErrors = t.ccErrors
            discontinuities = t.discontinuities
            rtpPacketsLost = t.rtpPacketsLost
            resyncs = t.resyncs
        }
    }

    struct AudioOutput: Encodable, Sendable {
        var device: String
        var sampleRate: Int
        var channels: Int
        var bufferFrames: Int
        var periodFrames: Int
        var framesPlayed: Int
        var underruns: Int
        var chunksDropped: Int
        @Nullable var loss: String?

        init(_ a: AudioOutputStatus) {
            device = a.device
            sampleRate = a.format.sampleRate
            channels = a.format.channels
            bufferFrames = a.bufferFrames
            periodFrames = a.periodFrames
            framesPlayed = a.framesPlayed
            underruns = a.underruns
            chunksDropped = a.chunksDropped
            loss = a.loss
        }
    }

    struct Adaptive: Encodable, Sendable {
        var variant: Variant
        var variants: [Variant]
        @Nullable var throughput: Double?
        var switches: Int
        var abandonedSegments: Int

        init(_ a: AdaptiveStatus) {
            variant = Variant(a.variant)
            variants = a.variants.map(Variant.init)
            throughput = a.throughput
            switches = a.switches
            abandonedSegments = a.abandonedSegments
        }
    }

    /// One HLS variant.
    struct Variant: Encodable, Sendable {
        var id: Int
        var bitrate: Int
        var width: Int
        var height: Int

        init(_ v: HLSVariant) {
            id = v.id
            bitrate = v.bitrate
            width = v.width
            height = v.height
        }
    }
}

extension Wire {
    /// `/stats`' `mqtt`: the link to the fleet's broker.
    struct FleetStats: Encodable, Sendable {
        var connected: Bool
        /// Connections made (the first and each after a loss).
        var connections: Int
        var commands: Int
        /// Messages of the queue sent (a resend counts again), acknowledged, and waiting.
        var forwarded: Int
        var acknowledged: Int
        var queued: Int
        /// Whether the queue is in the store (false: in memory, lost at a restart).
        var stored: Bool
    }
}

extension Wire {
    /// `/state`'s `colour`: the current item's video colour as its stream states it.
    struct Colour: Encodable, Sendable {
        var matrix: String
        var range: String
        var primaries: String
        var transfer: String
        /// "sdr", "pq" (HDR10) or "hlg".
        var dynamicRange: String
        @Nullable var masteringDisplay: MasteringDisplay?
        @Nullable var contentLightLevel: ContentLightLevel?

        init(_ v: VideoStreamInfo) {
            matrix = v.colorSpace.description
            range = v.colorRange.rawValue
            primaries = v.colorPrimaries.description
            transfer = v.colorTransfer.description
            dynamicRange = v.colorTransfer.dynamicRange.rawValue
            masteringDisplay = v.masteringDisplay
            contentLightLevel = v.contentLightLevel
        }
    }
}
