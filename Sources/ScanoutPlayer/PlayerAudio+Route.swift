import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio


// The track's packets: routed from the reader's source, decoded, and queued for the device (or
// held); the end of the track.
extension PlayerAudio {
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
    func watchEnd(of reader: FrameReader) {
        let epoch = self.epoch
        reader.onInputEnd = { [weak self] in
            guard let self, self.epoch == epoch else { return }
            self.finish()
        }
    }

    /// Reads the track from `source` (on the reader's thread, inside its reads).
    func route(_ source: any PacketSource) {
        guard let t = track else { return }
        self.source = source
        let epoch = self.epoch
        try? source.route(track: t.index) { [weak self] packet in self?.play(packet, epoch: epoch) }
    }

    func unroute() {
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
    func play(_ packet: Packet, epoch: Int? = nil) {
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
