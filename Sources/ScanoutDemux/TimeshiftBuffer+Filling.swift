import Foundation
import ScanoutCore

extension TimeshiftBuffer {
    /// Reads `demuxer` on a thread of its own into the buffer until the input ends, fails or the
    /// buffer is closed, with the kept tracks' packets. From then on only that thread reads packets from `demuxer` (its other
    /// users may read only what it fixed at open, such as `video`); the thread lets go of it when it ends.
    public func startFilling(from demuxer: Demuxer) {
        let handOff = DemuxerHandOff(demuxer)
        let t = Thread(named: "scanout-timeshift") { [self] in
            let demuxer = handOff.demuxer
            let packet = Packet()
            var routed: Set<Int> = []
            defer { for t in routed { try? demuxer.route(track: t, to: nil) } }
            while !isClosed {
                // The kept tracks' packets come through the demuxer's routes, inside its reads.
                let wanted = keptTracks
                if wanted != routed {
                    for t in routed.subtracting(wanted) { try? demuxer.route(track: t, to: nil) }
                    for t in wanted.subtracting(routed) { try? demuxer.route(track: t) { [unowned self] in append(keptTrack: $0) } }
                    routed = wanted
                }
                do {
                    guard try demuxer.read(into: packet) else { finish(nil); return }
                    append(packet, transportCounts: demuxer.transportCounts)
                } catch let e as MediaError {
                    if case .sourceSilent = e { sourceSilent(e); continue }
                    finish(e)
                    return
                } catch {
                    finish(.readFailed(input: input, reason: "\(error)"))
                    return
                }
            }
        }
        t.start()
    }
}

/// Carries a demuxer to the thread that fills a timeshift buffer.
/// `@unchecked Sendable`: after the hand-off only that thread reads from the demuxer; the
/// reader that opened it keeps a reference for what was fixed at open (`video`, `input`).
private final class DemuxerHandOff: @unchecked Sendable {
    let demuxer: Demuxer
    init(_ demuxer: Demuxer) { self.demuxer = demuxer }
}
