import CFFmpeg
import ScanoutCore

extension Orientation {
    /// From a 3×3 display matrix in FFmpeg's 16.16 layout (`av_display_rotation_get`).
    init(displayMatrix m: UnsafePointer<Int32>) {
        var theta = -av_display_rotation_get(m).rounded()
        if theta.isNaN { theta = 0 }
        theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
        if abs(theta - 90) < 1 {
            // transpose=cclock_flip (a plain transpose) or transpose=clock
            self.init(rotation: 90, mirrored: m[3] > 0)
        } else if abs(theta - 180) < 1 {
            switch (m[0] < 0, m[4] < 0) {
            case (true, true): self.init(rotation: 180)
            case (true, false): self.init(rotation: 0, mirrored: true)
            case (false, true): self.init(rotation: 180, mirrored: true)
            case (false, false): self.init()
            }
        } else if abs(theta - 270) < 1 {
            // transpose=clock_flip or transpose=cclock
            self.init(rotation: 270, mirrored: m[3] < 0)
        } else if abs(theta) < 1, m[4] < 0 {
            self.init(rotation: 180, mirrored: true)  // vflip
        } else {
            // Angles other than quarter turns are not applied (ffmpeg would rotate with
            // interpolation); the picture is shown as stored.
            self.init()
        }
    }
}
