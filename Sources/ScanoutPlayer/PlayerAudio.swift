import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// The player's audio settings: where sound goes, how loud, which track.
public struct AudioSettings: Sendable, Equatable {
    /// The ALSA PCM device (`default`, `hdmi:CARD=PCH,DEV=0`, `plughw:0,3`...); `none`: silent,
    /// no audio decoded.
    public var device: String
    /// 0...100, applied to the samples (`sample × volume / 100`).
    public var volume: Int
    public var muted: Bool
    /// The audio track every item plays unless it names its own (`AudioSelection`).
    public var selection: AudioSelection
    /// `audio-lost@N` of a fault plan: writes fail after N periods.
    public var failWritesAfter: Int?
    /// `audio-open@N` of a fault plan: the first N openings fail.
    public var failOpens: Int?

    public init(device: String = "none", volume: Int = 100, muted: Bool = false, selection: AudioSelection = AudioSelection(),
                failWritesAfter: Int? = nil, failOpens: Int? = nil) {
        self.device = device
        self.volume = volume
        self.muted = muted
        self.selection = selection
        self.failWritesAfter = failWritesAfter
        self.failOpens = failOpens
    }

    public var isSilent: Bool { device == "none" || device.isEmpty }
}

/// Which audio track to play: a stream index (`--aid`), else the first language of the list some
/// track has (`--alang`), else the track flagged default (`TrackSelector`).
public struct AudioSelection: Sendable, Equatable {
    public var track: Int?
    public var languages: [String]
    public init(track: Int? = nil, languages: [String] = []) {
        self.track = track
        self.languages = languages
    }
    public var isEmpty: Bool { track == nil && languages.isEmpty }
}

/// The current item's audio (the engine's; `play` uses one beside its session): its track routed from the reader's demuxer to a decoder, the chunks
/// to the output thread (`AudioOutput`), and the output as the session's master clock.
///
/// Runs on the engine's thread, like the engine; the route's sink runs there too, inside the
/// reader's reads. The output is opened at the first item with audio and kept for the next ones
/// (its format is the device's; every track is converted to it), so a gapless transition goes on
/// writing to the same device.
public final class PlayerAudio {
    public init() {}

    deinit { output?.close() }
    public private(set) var output: AudioOutput?
    private var decoder: AudioDecoder?
    /// Where the track's packets come from: the reader's demuxer, or its timeshift cursor.
    private var source: (any PacketSource)?
    private var epoch = 0
    /// The decoder was drained (`finish`): the track is read to its end.
    private var finished = false
    private var lossReported = false
    private var rate = 1.0
    /// The device that failed to open, and when: tried again `reopenInterval` later.
    private var refused: String?
    private var refusedAt: UInt64 = 0
    /// Openings tried (for `AudioSettings.failOpens`).
    private var opens = 0
    /// How long a device that could not open waits before it is tried again.
    public var reopenInterval: UInt64 = 2_000_000_000
    /// The engine's clock (monotonic nanoseconds).
    public var clock: () -> UInt64 = monotonicNanoseconds
    /// The device and its counts (nil while none is open).
    public var status: AudioOutputStatus? {
        guard let output else { return nil }
        let c = output.counts
        return AudioOutputStatus(device: output.deviceName, format: output.format, bufferFrames: output.deviceBuffer.frames,
                                 periodFrames: output.deviceBuffer.period, framesPlayed: c.framesPlayed, underruns: c.underruns,
                                 chunksDropped: c.dropped, loss: output.loss?.description)
    }
    /// The track playing, for `/state`.
    public private(set) var track: TrackInfo?
    /// A live item's sound is held back until its picture has played this long (stream
    /// seconds), so that the picture's own delays at the live edge (the decoder's reordering,
    /// packets that come late) have moved its timeline back first (`PlaybackSession`'s live slips).
    public var liveHold = 0.5
    /// ...and then starts this far behind the picture, which waits for it: playback settles
    /// that much behind the newest frame received, so that later delays in arrival are
    /// absorbed instead of making the picture late on the sound.
    public var liveMargin = 0.3
    /// While a live item's sound is held back: its chunks so far.
    private var held: [AudioChunk]?
    /// The stream time of the first frame shown while holding.
    private var heldSince: Double?
    /// The sound waits for the first picture (an item started afresh, a seek): `held` keeps its
    /// chunks until that frame is shown, then they start so that the frame's sample is heard
    /// when the frame is seen (`presented`).
    private var waitingForPicture = false
    /// The stream time the last seek cut the sound at (nil: none since the item started).
    private var seekCut: Double?
    /// The picture the sound was let go for, and when it is seen, until the first chunk is
    /// queued lined up with it (`enqueue`): a held one, or, when none of the sound had been
    /// decoded then (its packets come after the frame's in the file), the first that comes.
    private var lineUpWith: (picture: Double, seenAt: UInt64)?
    /// The most sound kept while waiting for the picture, seconds: past that it plays as it is.
    public var pictureWaitLimit = 2.0
    /// How much later than at once the first frame after a start or a seek is shown when the
    /// sound waits for it, nanoseconds: the output thread writes the silence before the sound
    /// in that time, not after the frame is on screen, and a screen draws the frame in it
    /// (`PlaybackSession.firstFrameDrawLead`).
    public var pictureLead: UInt64 = 80_000_000

    /// Starts the audio of `reader` for `item`. Returns what to report: a device that cannot
    /// open, a track asked for that does not exist.
    /// `live`: a live item read through its timeshift buffer; its sound is held back at first
    /// (`liveHold`, `liveMargin`).
    public func attach(reader: FrameReader, item: PlaylistItem, settings: AudioSettings, session: PlaybackSession,
                gapless: Bool, live: Bool = false, early: [Int: [Packet]] = [:]) -> [PlayerEvent] {
        detach(session: session, flush: !gapless)
        guard !settings.isSilent else { return [] }
        guard let t = Self.track(of: reader, item: item, settings: settings) else {
            if let wanted = Self.selection(item: item, settings: settings).track {
                return [.warning("\(item.source): no audio track \(wanted); playing without sound")]
            }
            return []
        }
        var events: [PlayerEvent] = []
        if let lost = output, lost.loss != nil {
            // Lost during an earlier item: opened again for this one (a screen turned back on).
            lost.close()
            output = nil
        }
        if output == nil || output?.deviceName != settings.device {
            guard refused != settings.device else { return [] }
            output?.close()
            output = nil
            do {
                opens += 1
                if let n = settings.failOpens, opens <= n {
                    throw AudioError.deviceOpenFailed(device: settings.device, reason: "audio-open@\(n): opening \(opens) of \(n) fails (SCANOUT_FAULTS)")
                }
                output = try AudioOutput(device: settings.device, format: AudioFormat(sampleRate: t.sampleRate > 0 ? t.sampleRate : 48000,
                                                                                       channels: max(2, t.channels)),
                                         failWritesAfter: settings.failWritesAfter)
                lossReported = false
            } catch {
                refused = settings.device
                refusedAt = clock()
                let reason = (error as? AudioError).map { "\($0)" } ?? "\(error)"
                return [.audioLost(device: settings.device, reason: reason), .warning("\(reason); video plays with its own clock")]
            }
        }
        guard let output, output.loss == nil else { return events }
        output.setVolume(settings.volume, muted: settings.muted)
        do {
            decoder = try AudioDecoder(demuxer: reader.demuxer, track: t, output: output.format)
        } catch {
            events.append(.warning("\(error); playing without sound"))
            return events
        }
        epoch += 1
        track = t
        if live { held = [] }
        else if !gapless, !reader.demuxer.audioOnly { waitForPicture(session) }
        seekCut = nil
        finished = false
        session.onAim = { [weak self] t, at in self?.aimed(streamTime: t, seenAt: at) }
        session.wantsSound = { [weak self] in self?.waitingForPicture == true && self?.held?.isEmpty == true }
        watchEnd(of: reader)
        // What was read with the first frame, before the route existed.
        for packet in early[t.index] ?? [] { play(packet) }
        route(reader.source)
        session.masterEpoch = epoch
        session.masterClock = output
        return events
    }

    /// The track `item` plays from `reader` with `settings`: nil with no device or no such track.
    static func track(of reader: FrameReader, item: PlaylistItem, settings: AudioSettings) -> TrackInfo? {
        guard !settings.isSilent else { return nil }
        let selection = selection(item: item, settings: settings)
        return TrackSelector.pick(.audio, from: reader.demuxer.tracks, index: selection.track, languages: selection.languages)
    }

    private static func selection(item: PlaylistItem, settings: AudioSettings) -> AudioSelection {
        item.audio.isEmpty ? settings.selection : item.audio
    }

    /// Tries the device that could not open again, once `reopenInterval` has passed since the
    /// last try, for the current item (its audio from where its reader is). Returns
    /// `audioRestored` when it opens; nothing when it fails again (`audioLost` was said once).
    public func retry(reader: FrameReader, item: PlaylistItem, settings: AudioSettings, session: PlaybackSession) -> [PlayerEvent] {
        guard let device = refused, device == settings.device, clock() &- refusedAt >= reopenInterval else { return [] }
        refused = nil
        _ = attach(reader: reader, item: item, settings: settings, session: session, gapless: true)
        guard refused == nil, let output, output.loss == nil else { return [] }
        return [.audioRestored(device: device)]
    }

    /// Stops reading the current item's audio; `flush` throws away what is queued and playing.
    /// Without `flush` the item has played to its end (a gapless move to the next one): what the
    /// decoder still holds is queued first (`finish`).
    public func detach(session: PlaybackSession, flush: Bool) {
        if !flush { finish() }
        unroute()
        source = nil
        decoder = nil
        held = nil
        heldSince = nil
        waitingForPicture = false
        lineUpWith = nil
        track = nil
        session.masterClock = nil
        if flush { output?.flush() }
    }

    /// The item's reader is about to move (a seek) to stream time `seconds`: the samples queued
    /// and playing go, and the ones before `seconds` are cut.
    /// The sound from the target on waits for the target's frame (`aimed`, `presented`).
    public func seeking(toStreamTime seconds: Double, audioOnly: Bool = false, session: PlaybackSession) {
        guard let decoder else { return }
        held = nil
        heldSince = nil
        lineUpWith = nil
        if !audioOnly { waitForPicture(session) }
        seekCut = seconds
        finished = false
        decoder.flush()
        output?.flush(discardBefore: seconds)
    }

    /// The seek is done; `reader` is the one playback continues on (an exact seek's may be another).
    public func seeked(reader: FrameReader) {
        guard decoder != nil else { return }
        watchEnd(of: reader)
        if reader.source !== source {
            unroute()
            route(reader.source)
        }
    }

    public func setPaused(_ paused: Bool) { output?.setPaused(paused) }

    /// A frame of stream time `seconds` was shown; it reaches the screen at `shownAt` (the
    /// engine's clock; nil: now).
    ///
    /// The first frame after a start or a seek lets the sound held for it go
    /// (`waitingForPicture`), lined up with it (`release`): the target's first sample is heard
    /// when its frame is seen, the frame reaching the screen at the vblank after its commit.
    /// Before, the sound started as soon as the seek's reads decoded it, while the picture still
    /// had its decode and draw ahead of it: the first frames after a seek reached the screen a
    /// draw's time after their sound.
    ///
    /// While a live item's sound is held back, once the picture has played `liveHold` the sound
    /// starts `liveMargin` behind it: the chunks before that are cut
    /// (`AudioOutput.flush(discardBefore:)`) and the rest queued.
    public func presented(streamTime seconds: Double, shownAt: UInt64? = nil) {
        if waitingForPicture {
            release(picture: seconds, seenAt: shownAt ?? clock())
            return
        }
        guard let chunks = held, let output else { return }
        let since = heldSince ?? seconds
        heldSince = since
        guard seconds - since >= liveHold else { return }
        held = nil
        heldSince = nil
        output.flush(discardBefore: seconds - liveMargin)
        for c in chunks { output.enqueue(c) }
    }

    /// The sound is held until the first frame is aimed (`aimed`), and that frame comes
    /// `pictureLead` later than it would: time for the output thread to write the silence that
    /// goes before the sound.
    private func waitForPicture(_ session: PlaybackSession) {
        held = []
        waitingForPicture = true
        session.delayNextStart(by: pictureLead)
    }

    /// A timed frame of stream time `seconds` is to be seen at `seenAt`, and is about to be
    /// waited for and shown (`PlaybackSession.onAim`): the sound waiting for the picture starts
    /// from it, lined up with it (`release`).
    public func aimed(streamTime seconds: Double, seenAt: UInt64) {
        guard waitingForPicture else { return }
        release(picture: seconds, seenAt: seenAt)
    }

    /// `session` has shown its last frame: `presented(streamTime:shownAt:)` with that frame.
    /// Called after each step that shows one (repeating it for the same frame does nothing more).
    public func presented(by session: PlaybackSession) {
        guard let t = session.streamPosition else { return }
        presented(streamTime: t, shownAt: session.lastPresentedShown)
    }

    /// Lets the sound held for the picture go, lined up with the frame of stream time `t0` seen
    /// at `seenAt` (nil: as it is): the first sample kept (after a seek's cut) is to be heard
    /// `(first − t0) / rate` after the frame is seen (`AudioOutput.start(at:)`: silence first
    /// for the time left). No sample is cut for it: when the sound starts before its picture
    /// (an item whose audio begins first, an output thread late to write), the frames after the
    /// first wait for the sound's clock.
    private func release(picture t0: Double, seenAt: UInt64?) {
        waitingForPicture = false
        let chunks = held ?? []
        held = nil
        guard let output else { return }
        lineUpWith = seenAt.map { (t0, $0) }
        for c in chunks { enqueue(c, to: output) }
    }

    /// Queues `chunk` for the device. The first chunk of sound after it was let go for a
    /// picture (`lineUpWith`: the frame of stream time `t0` seen at `seenAt`), held or decoded
    /// later, is lined up with it: heard `(first − t0) / rate` after the frame is seen, its first
    /// sample being the chunk's or the seek's cut, whichever is later.
    private func enqueue(_ chunk: AudioChunk, to output: AudioOutput) {
        if let l = lineUpWith, !chunk.ends {
            lineUpWith = nil
            if let start = chunk.start {
                let first = max(start, seekCut ?? start)
                output.start(at: clockTime(l.seenAt, plus: (first - l.picture) / rate))
            }
        }
        output.enqueue(chunk)
    }

    /// Plays what is decoded from now on `r` times as fast (the output stretches it). What the
    /// output's stretcher holds for the old rate plays first, at the old rate.
    public func setRate(_ r: Double) {
        rate = r
    }

    /// The current item's track is read to its end (the last item of a playlist has ended, or
    /// the next one follows it gaplessly): the samples the decoder and the resampler still hold
    /// are queued, and then the item's end, at which the output's stretcher gives back what it
    /// holds, so that its sound plays to its last sample. Reading more of the track needs a seek
    /// (a flush) first.
    public func finish() {
        guard let decoder, output != nil, !finished else { return }
        finished = true
        for c in decoder.drain() { deliver(c) }
        deliver(.end())
    }

    /// The sound is finished as soon as `reader` has read its input to the end (with its last
    /// frames still to show), so that the clock runs to the item's last sample while they are.
    private func watchEnd(of reader: FrameReader) {
        let epoch = self.epoch
        reader.onInputEnd = { [weak self] in
            guard let self, self.epoch == epoch else { return }
            self.finish()
        }
    }

    /// Waits until everything queued has been heard, at most `timeout` seconds (the tail of the
    /// sound at the end of `play`); false when it was not.
    public func waitUntilHeard(timeout: Double) -> Bool {
        guard let output, output.loss == nil else { return true }
        return output.waitUntilHeard(timeout: timeout)
    }

    public func setVolume(_ settings: AudioSettings) {
        if settings.device != refused { refused = nil }
        output?.setVolume(settings.volume, muted: settings.muted)
    }

    /// The device's loss, once: the session is back on its own clock from then on.
    public func takeLoss(session: PlaybackSession) -> AudioLoss? {
        guard !lossReported, let loss = output?.loss else { return nil }
        lossReported = true
        session.masterClock = nil
        unroute()
        decoder = nil
        return loss
    }

    /// Reads the track from `source` (on the reader's thread, inside its reads).
    private func route(_ source: any PacketSource) {
        guard let t = track else { return }
        self.source = source
        let epoch = self.epoch
        try? source.route(track: t.index) { [weak self] packet in self?.play(packet, epoch: epoch) }
    }

    private func unroute() {
        if let source, let t = track { try? source.route(track: t.index, to: nil) }
    }

    /// Queues a chunk of the track for the device, marked with `epoch` (the current item's when
    /// nil), or keeps it while the sound is held back.
    private func deliver(_ chunk: AudioChunk, epoch: Int? = nil) {
        guard let output else { return }
        var c = chunk
        c.epoch = epoch ?? self.epoch
        c.rate = rate
        if held != nil { held?.append(c) } else { enqueue(c, to: output) }
    }

    /// Decodes `packet` and queues its samples for the device, marked with `epoch`.
    private func play(_ packet: Packet, epoch: Int? = nil) {
        guard let decoder, output != nil else { return }
        guard let chunks = try? decoder.decode(packet) else { return }
        for c in chunks { deliver(c, epoch: epoch) }
        // No picture came while this much sound was read (a video track that decodes nothing):
        // the sound plays as it is rather than never.
        if waitingForPicture, let h = held, let a = h.first?.start, let b = h.last?.start, b - a > pictureWaitLimit {
            release(picture: a, seenAt: nil)
        }
    }
}
