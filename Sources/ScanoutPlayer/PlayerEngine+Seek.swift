import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

// MARK: Seeking in a file (timeshift: `PlayerTimeshift`)

extension PlayerEngine {
    /// Moves to `seconds` from the item's first frame: exactly that frame (`exact`, through the
    /// frame index), or the keyframe at or before it. The frame landed on is shown at once;
    /// playback goes on from it if it was playing.
    public func seek(to seconds: Double, exact: Bool) throws {
        guard [.ready, .playing, .paused, .ended, .buffering].contains(state), let item = current else {
            throw PlayerError.invalidState(command: "seek", state: state)
        }
        guard item.timeshift == nil else { throw PlayerError.seekOnLive }
        guard seconds >= 0, seconds.isFinite, duration.map({ seconds < $0 }) ?? true else {
            throw PlayerError.seekOutOfRange(seconds: seconds, duration: duration)
        }
        try performSeek(item, target: seconds, exact: exact) { try seekFrame(item, seconds: seconds, exact: exact) }
    }

    /// Shows the frame `find` lands on (`seekStarted`, `seeking`, `seekCompleted`), then goes
    /// on as before the seek: playing or paused. The one seek sequence of files and timeshift.
    func performSeek(_ item: PreparedItem, target seconds: Double, exact: Bool,
                     find: () throws -> (VideoFrame, Double, Int?)) throws {
        let before = phase
        emit(.seekStarted(target: seconds, exact: exact))
        set(.seeking)
        item.seeked = true
        let resumesPlaying = before == .playing || before == .buffering
        // Not playing (ready, paused): what the seek reads of the sound waits for the play.
        if !resumesPlaying { audio.setPaused(true) }
        audio.seeking(toStreamTime: streamTime(of: item, media: seconds),
                      audioOnly: item.reader.demuxer.audioOnly, session: session)
        do {
            let (frame, media, number) = try find()
            audio.seeked(reader: item.reader)
            catchUpSubtitles(item, pts: frame.pts)
            session.hold(frame, media: media)
            _ = try session.step()  // shows it now: it is due at the re-anchored timeline's start
            presentLog?.note(session)
            audio.presented(by: session)
            session.rebase(atMedia: media)
            set(Self.afterSeek(from: before, at: media))
            emit(.seekCompleted(position: media, frame: number))
            if resumesPlaying { lastPositionEvent = clock.now() }
        } catch let e as MediaError {
            audio.seeked(reader: item.reader)
            // As before the seek (ended: paused on the frame still on screen).
            set(before == .ended ? .paused(resumeAt: nil) : (before == .buffering ? .playing : before))
            emit(.error(message: e.description, item: index, skipped: false))
            throw PlayerError.media(item: item.index, e)
        }
    }

    /// Where a seek that landed on media time `media` leaves the engine that was in `before`:
    /// playing on, or stopped on the frame shown (ended becomes paused), resuming from it.
    private static func afterSeek(from before: EnginePhase, at media: Double) -> EnginePhase {
        switch before {
        case .playing, .buffering: .playing
        case .ready: .ready(resumeAt: media)
        default: .paused(resumeAt: media)
        }
    }

    private func seekFrame(_ item: PreparedItem, seconds: Double, exact: Bool) throws -> (VideoFrame, Double, Int?) {
        let tb = item.video.timeBase.doubleValue
        let origin = item.originPts ?? 0
        // An audio-only item's packets are all keyframes: the plain seek lands within a packet;
        // so does a still image's timeline, whose every showing is the same picture.
        if exact, !item.reader.demuxer.audioOnly, !item.reader.isTimedStill {
            let seeker = try item.exactSeeker(decoder: itemDecoderOptions)
            let n = try seeker.frameNumber(at: seconds)
            // The seeker reads from the keyframe on: the audio it meets is the target's.
            audio.seeked(reader: seeker.reader)
            let f = try seeker.frame(n).clone()
            item.useSeekerReader()
            subtitles.follow(item)
            watchStalls(item.reader)
            session.replaceReader(item.reader)
            return (f, Double((f.pts ?? origin) - origin) * tb, n)
        }
        let ts = origin + Int64((seconds / tb).rounded(.down))
        try item.reader.seek(toTimestamp: ts, position: nil)
        session.replaceReader(item.reader)
        let f = VideoFrame()
        guard try item.reader.next(into: f) else { throw MediaError.timeOutOfRange(input: item.item.source, seconds: seconds, durationSeconds: duration ?? 0) }
        return (f, Double((f.pts ?? origin) - origin) * tb, nil)
    }
}
