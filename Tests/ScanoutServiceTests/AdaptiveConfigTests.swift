import Foundation
import ScanoutService
import ScanoutTestSupport
import Testing

/// The adaptive HLS keys of the config file that steer abandoning and the buffer rule.
@Suite struct AdaptiveConfigTests {
    @Test func bufferAndAbandonKeysAreReadAndCheckedByName() throws {
        let scratch = try Scratch()
        let file = scratch.path("scanout.json")
        try #"{"minBufferForUp": 4.5, "starvationMargin": 1, "abandonSegments": false}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let c = try ServiceConfig.load(file: file)
        #expect(c.adaptive.minBufferForUp == 4.5 && c.adaptive.starvationMargin == 1 && !c.adaptive.abandonSegments)
        for (json, field, says) in [(#"{"abandonSegments": "yes"}"#, "abandonSegments", "true or false"),
                                    (#"{"minBufferForUp": -1}"#, "minBufferForUp", "within"),
                                    (#"{"starvationMargin": "0.5"}"#, "starvationMargin", "a number")] {
            try json.write(toFile: file, atomically: true, encoding: .utf8)
            #expect {
                _ = try ServiceConfig.load(file: file)
            } throws: { error in
                let message = "\(error)"
                return message.contains(field) && message.contains(says)
            }
        }
    }
}
