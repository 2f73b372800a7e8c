import Foundation
import ScanoutCore

// The output thread's writes: a period at a time, the clock noted after each.
extension AudioOutput {
    /// Writes chunks in order, each a period at a time, scaled by the volume, updating the clock
    /// after each period; false once the device is lost. A pause in the middle puts what is left
    /// (of the chunk being written, then the ones after it) back at the queue's head, unless a
    /// flush came since `flushes`, so that play goes on from the sample after the last one written.
    func write(_ chunks: [AudioChunk], volume: Int, muted: Bool, generation: Int, flushes: Int) -> Bool {
        for (k, var chunk) in chunks.enumerated() {
            applyVolume(&chunk.samples, volume: volume, muted: muted)
            switch write(chunk, generation: generation, flushes: flushes, then: chunks[(k + 1)...]) {
            case .lost: return false
            case .stopped: return true
            case .written: continue
            }
        }
        return true
    }

    private enum WriteOutcome { case written, stopped, lost }

    /// Writes one chunk (see above); `later` are the chunks to write after it.
    private func write(_ chunk: AudioChunk, generation: Int, flushes: Int, then later: ArraySlice<AudioChunk>) -> WriteOutcome {
        let step = device.periodFrames * format.channels
        var offset = 0
        condition.withLock { writingFirst = chunk.start.map { (chunk.epoch, $0, chunk.tempo) } }
        while offset < chunk.samples.count {
            let stop = condition.withLock {
                guard self.generation != generation || closed || paused else { return false }
                writingLeft = 0
                if paused, !closed, self.flushes == flushes {
                    var rest = chunk
                    rest.samples.removeFirst(offset)
                    rest.start = chunk.start.map { $0 + Double(offset / format.channels) / Double(format.sampleRate) * chunk.tempo }
                    let back = [rest] + later
                    queue.insert(contentsOf: back, at: 0)
                    queuedFrames += back.reduce(0) { $0 + $1.samples.count } / format.channels
                }
                return true
            }
            if stop { return .stopped }
            let end = min(chunk.samples.count, offset + step)
            var n = chunk.samples.withUnsafeBufferPointer { all in
                failing() ? -Int(EIO) : device.write(UnsafeBufferPointer(rebasing: all[offset..<end]))
            }
            if n == -Int(EPIPE) || n == -Int(ESTRPIPE) {
                condition.withLock { underruns += 1 }
                if device.recover(n) {
                    n = chunk.samples.withUnsafeBufferPointer { device.write(UnsafeBufferPointer(rebasing: $0[offset..<end])) }
                }
            }
            if n < 0 {
                condition.withLock {
                    lost = AudioLoss(device: deviceName, reason: device.describe(error: n))
                    heard = nil
                    queue.removeAll()
                    queuedFrames = 0
                }
                return .lost
            }
            offset = end
            let delay = device.delay()
            let t = now()
            condition.withLock {
                writes += 1
                framesPlayed += n
                writingLeft = (chunk.samples.count - offset + later.reduce(0) { $0 + $1.samples.count }) / format.channels
                guard self.generation == generation, let start = chunk.start else { return }
                let rate = Double(format.sampleRate)
                writtenEnd = start + Double(offset / format.channels) / rate * chunk.tempo
                heard = writtenEnd - Double(delay ?? 0) / rate * chunk.tempo
                heardTempo = chunk.tempo
                heardEpoch = chunk.epoch
                stamp = t
            }
        }
        return .written
    }

    private func failing() -> Bool {
        condition.withLock { failWritesAfter.map { writes >= $0 } ?? false }
    }
}
