import Foundation
import ScanoutTestSupport
import Testing

/// Option values that are one of a few words: completion offers them, and a wrong word is refused
/// with the list.
@Suite("option values as enumerations")
struct CompletionTests {
    /// How ArgumentParser's bash script lists completion words.
    static func bashList(_ words: [String]) -> String {
        "'" + words.joined(separator: "'$'\\n''") + "'"
    }

    @Test("the bash completion script offers each option's values")
    func bash() throws {
        let r = try CLI.run(["--generate-completion-script", "bash"], timeout: 30)
        #expect(r.status == 0)
        let script = r.stdoutText
        for words in [["auto", "native", "hw", "sw"],             // --player-type
                      ["auto", "vaapi", "nvdec"],                 // --hw-backend
                      ["auto", "kms", "headless"],                // play and serve --output
                      ["auto", "gl", "cpu"],                      // play, serve and render --renderer
                      ["fit", "fill", "stretch", "none"],         // --scale
                      ["auto", "surfaceless", "device", "default"],  // --egl-platform
                      ["none", "one", "all"],                     // serve --repeat
                      ["cpu", "gl"]] {                            // bench --renderer
            #expect(script.contains(Self.bashList(words)), "\(words)")
        }
        for shell in ["zsh", "fish"] {
            let s = try CLI.run(["--generate-completion-script", shell], timeout: 30)
            #expect(s.status == 0)
            #expect(s.stdoutText.contains("player-type") && s.stdoutText.contains("surfaceless"), "\(shell)")
        }
    }

    @Test("a word that is not one of them: exit 1 with the words")
    func refused() throws {
        let clip = try Fixtures.path("counter.mp4")
        for (args, words) in [(["play", clip, "--output", "sideways"], "'auto', 'kms' or 'headless'"),
                              (["render", clip, "--frames", "0", "--scale", "zoom"], "'fit', 'fill', 'stretch' or 'none'"),
                              (["framemd5", clip, "--player-type", "gpu"], "'auto', 'native', 'hw' or 'sw'"),
                              (["serve", "--renderer", "vulkan"], "'auto', 'gl' or 'cpu'")] {
            let r = try CLI.run(args, timeout: 30)
            #expect(r.status == 1, "\(args)")
            #expect(r.stderrText.contains(words), "\(args): \(r.stderrText)")
        }
    }
}
