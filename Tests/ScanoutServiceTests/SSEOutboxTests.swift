import Foundation
@testable import ScanoutService
import Testing

@Suite("an event stream's outbox: what queued up is written in one piece, in order, and nothing is lost")
struct SSEOutboxTests {
    @Test("messages posted before the writer looks come out as one batch, in order; later ones in the next")
    func batches() async throws {
        let outbox = SSEOutbox()
        outbox.post("a\n\n")
        outbox.post("b\n\n")
        outbox.post("c\n\n")
        var written: [String] = []
        let writer = Task {
            var got: [String] = []
            try await outbox.drain { got.append($0) }
            return got
        }
        try await Task.sleep(for: .milliseconds(100))
        outbox.post("d\n\n")
        try await Task.sleep(for: .milliseconds(100))
        outbox.post("e\n\n")
        outbox.finish()
        written = try await writer.value
        #expect(written.first == "a\n\nb\n\nc\n\n")
        #expect(written.joined() == "a\n\nb\n\nc\n\nd\n\ne\n\n")
    }

    @Test("a thousand messages from four producers: every one written exactly once")
    func concurrentProducers() async throws {
        let outbox = SSEOutbox()
        let writer = Task {
            var text = ""
            try await outbox.drain { text += $0 }
            return text
        }
        await withTaskGroup(of: Void.self) { group in
            for p in 0..<4 {
                group.addTask { for i in 0..<250 { outbox.post("\(p).\(i)\n") } }
            }
        }
        outbox.finish()
        let lines = try await writer.value.split(separator: "\n")
        #expect(lines.count == 1000 && Set(lines).count == 1000)
    }
}
