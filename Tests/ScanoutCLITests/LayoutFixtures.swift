import Foundation
import ScanoutTestSupport

/// The counter clip, a JPEG of its frame 50, and the path of a layout file to write, in `scratch`:
/// what the layout tests build their screens from.
func layoutInputs(in scratch: Scratch) throws -> (clip: String, still: String, layout: String) {
    let clip = try Fixtures.path("counter.mp4")
    let still = scratch.path("still.jpg")
    _ = try Proc.ffmpeg(["-i", clip, "-vf", "select=eq(n\\,50)", "-frames:v", "1", "-q:v", "2", "-y", still])
    return (clip, still, scratch.path("layout.json"))
}
