import Foundation
import ScanoutCore

// The master clock: what the listener hears, asked from the loop thread.
extension AudioOutput {
    /// The stream time of item `epoch` heard at `t`. While another item is heard and `epoch`'s
    /// samples are queued behind it (a gapless move to the next item), the time it will be
    /// heard at: its first sample comes once the samples before it are played, so its picture
    /// follows its sound from its first frame on, not only once the output thread writes it.
    public func streamTime(at t: ClockTime, epoch: Int) -> Double? {
        condition.withLock {
            guard let heard, lost == nil, !paused else { return nil }
            let elapsed = (t - stamp).secondsValue
            let position = heard + elapsed * heardTempo
            // Past the last sample written the device falls silent: no clock to follow. A device
            // that reports no delay (a null or file device) is heard as it is written, so the
            // clock runs on for two periods, the time the thread takes to write the next one.
            // So does it while the thread stretches the next chunk: its samples are on their way.
            guard position < writtenEnd + slack * heardTempo || stretching else { return nil }
            if heardEpoch == epoch { return position }
            guard let i = queue.firstIndex(where: { $0.epoch == epoch }), let first = queue[i].start else {
                // None of it queued: its first samples are being written (and none is heard
                // yet), or are inside the stretcher with nothing out yet, behind what is being
                // written.
                let held = (writtenEnd - position) / heardTempo
                if let w = writingFirst, w.epoch == epoch { return w.start - held * w.tempo }
                if let s = stretcherFirst, s.epoch == epoch {
                    return s.start - (held + Double(writingLeft) / Double(format.sampleRate)) * s.tempo
                }
                return nil
            }
            // Seconds until its first sample: what the device holds, the rest of the chunk
            // being written, the chunks queued before it. What the device holds is negative
            // when the clock has run past the last write (a device that reports no delay,
            // between two writes): the two items' clocks then still move as one.
            let before = Double(writingLeft + stretcherPending) + queue[..<i].reduce(0) { $0 + Self.playedFrames($1, channels: format.channels) }
            let wait = (writtenEnd - position) / heardTempo + before / Double(format.sampleRate)
            return first - wait * Self.tempoHeard(queue[i])
        }
    }

    /// How many frames `chunk` plays for: stretched first when it is not yet (`AudioChunk.rate`).
    static func playedFrames(_ chunk: AudioChunk, channels: Int) -> Double {
        Double(chunk.samples.count / channels) / (chunk.tempo == 1 ? chunk.rate : 1)
    }

    /// Stream seconds a played second of `chunk` covers, once stretched.
    static func tempoHeard(_ chunk: AudioChunk) -> Double { chunk.tempo == 1 ? chunk.rate : chunk.tempo }
}
