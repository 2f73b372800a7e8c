import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// The current item's audio (the engine's; `play` uses one beside its session): its track routed from the reader's demuxer to a decoder, the chunks
/// to the output thread (`AudioOutput`), and the output as the session's master clock.
///
/// Runs on the engine's thread, like the engine; the route's sink runs there too, inside the
/// reader's reads. The output is opened at the first item with audio and kept for the next ones
/// (its format is the device's; every track is converted to it), so a gapless transition goes on
/// writing to the same device.
///
/// Split by concern: this file holds the state, opening the output and the commands the engine
/// gives; `+Picture` how the sound waits for the first picture and is lined up with it, and how
/// a live item's sound is held back; `+Route` how the track's packets are routed, decoded and
/// queued. The state is internal to ScanoutPlayer so that those files reach it; only the
/// engine's thread touches it.
public final class PlayerAudio {
    public init() {}

    deinit { output?.close() }
    public private(set) var output: AudioOutput?
    var decoder: AudioDecoder?
    /// Where the track's packets come from: the reader's demuxer, or its timeshift cursor.
    var source: (any PacketSource)?
    var epoch = 0
    /// The decoder was drained (`finish`): the track is read to its end.
    var finished = false
    var lossReported = false
    var rate = 1.0
    /// The device that failed to open, and when: tried again `reopenInterval` later.
    var refused: String?
    var refusedAt = ClockTime.zero
    /// Openings tried (for `AudioSettings.failOpens`).
    var opens = 0
    /// How long a device that could not open waits before it is tried again.
    public var reopenInterval = Duration.seconds(2)
    /// The engine's clock.
    public var clock: () -> ClockTime = ClockTime.now
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
    var held: [AudioChunk]?
    /// The stream time of the first frame shown while holding.
    var heldSince: Double?
    /// The sound waits for the first picture (an item started afresh, a seek): `held` keeps its
    /// chunks until that frame is shown, then they start so that the frame's sample is heard
    /// when the frame is seen (`presented`).
    var waitingForPicture = false
    /// The stream time the last seek cut the sound at (nil: none since the item started).
    var seekCut: Double?
    /// The picture the sound was let go for, and when it is seen, until the first chunk is
    /// queued lined up with it (`enqueue`): a held one, or, when none of the sound had been
    /// decoded then (its packets come after the frame's in the file), the first that comes.
    var lineUpWith: (picture: Double, seenAt: ClockTime)?
    /// The most sound kept while waiting for the picture, seconds: past that it plays as it is.
    public var pictureWaitLimit = 2.0
    /// How much later than at once the first frame after a start or a seek is shown when the
    /// sound waits for it: the output thread writes the silence before the sound
    /// in that time, not after the frame is on screen, and a screen draws the frame in it
    /// (`PlaybackSession.firstFrameDrawLead`).
    public var pictureLead = Duration.milliseconds(80)

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
        if let failed = openOutput(for: t, settings: settings) { return failed }
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

    /// Makes `output` the one for `settings.device`, opened for `track` with the settings'
    /// `sinkFactory` unless it is open already: one lost during an earlier item is opened again
    /// (a screen turned back on).
    /// Returns nil once it is open; else what `attach` returns: nothing for the device refused
    /// before (it waits for `retry`), or the failure to report.
    private func openOutput(for track: TrackInfo, settings: AudioSettings) -> [PlayerEvent]? {
        if let lost = output, lost.loss != nil {
            // Lost during an earlier item: opened again for this one (a screen turned back on).
            lost.close()
            output = nil
        }
        guard output == nil || output?.deviceName != settings.device else { return nil }
        guard refused != settings.device else { return [] }
        output?.close()
        output = nil
        do {
            opens += 1
            if let n = settings.failOpens, opens <= n {
                throw AudioError.deviceOpenFailed(device: settings.device, reason: "audio-open@\(n): opening \(opens) of \(n) fails (SCANOUT_FAULTS)")
            }
            let wanted = AudioFormat(sampleRate: track.sampleRate > 0 ? track.sampleRate : 48000, channels: max(2, track.channels))
            let sinks = settings.sinkFactory
            output = AudioOutput(sink: try sinks.open(device: settings.device, format: wanted),
                                 failWritesAfter: settings.failWritesAfter, now: sinks.now)
            lossReported = false
            return nil
        } catch {
            refused = settings.device
            refusedAt = clock()
            let reason = (error as? AudioError).map { "\($0)" } ?? "\(error)"
            return [.audioLost(device: settings.device, reason: reason), .warning("\(reason); video plays with its own clock")]
        }
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
        guard let device = refused, device == settings.device, clock() - refusedAt >= reopenInterval else { return [] }
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

    /// Makes the sound `ppm` parts per million longer from the next packet on (a sync group's
    /// follower keeping its sound on the group's clock: `AudioDecoder.setStretch`).
    public func setStretch(ppm: Int) { decoder?.setStretch(ppm: ppm) }

    /// Plays what is decoded from now on `r` times as fast (the output stretches it). What the
    /// output's stretcher holds for the old rate plays first, at the old rate.
    public func setRate(_ r: Double) {
        rate = r
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
}
